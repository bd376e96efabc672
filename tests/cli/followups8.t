# followups8: hardening follow-ups.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. A dense model's `infer --target` table had no TTFT column, where the
# MoE table has "TTFT ms" (text) and ttft_s (csv/json).  It has both now,
# and the value is gp.infer_plan's ttft_s for the same job: one replica's
# TTFT at the chosen batch (the same engine call, so equal up to the
# printed digits: 1e-12 relative).
{
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '5000');
    is($c, 0, 'dense --target: runs') or diag $e;
    like($o, qr/^target tok\/s\s+ITL limit ms\s+GPUs\s+replica\s+batch\/replica\s+tok\/s\s+ITL ms\s+TTFT ms\s+cost\/Mtok$/m,
         'dense --target text: a TTFT ms column, after ITL ms as in the MoE table') or diag $o;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '5000', '--format', 'json');
    my $row = (eval { JSON::PP::decode_json($o) } || [{}])->[0];
    my $lua = "$dir/ttft.lua";
    write_file($lua, <<'LUA');
local gp = require "gpuplan"
local p = gp.infer_plan{ model = "llama3-8b", gpu = "h100-sxm", target = 5000 }
print(string.format("%.17g", p.ttft_s))
LUA
    ($c, my $lo, $e) = run_gp('run', $lua);
    is($c, 0, 'gp.infer_plan runs') or diag $e;
    ok(defined $row->{ttft_s} && $row->{ttft_s} > 0, 'dense --target json: ttft_s, a positive time')
        or diag $o;
    ok(defined $row->{ttft_s} && abs($row->{ttft_s} / $lo - 1) < 1e-12,
       "dense --target json: ttft_s is gp.infer_plan's ($lo)") or diag $o;
}

done_testing();
