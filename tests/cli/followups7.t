# followups7: hardening follow-ups, the CLI's side.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);

# 2. infer --target's JSON and CSV keys were its own (itl_ms, ttft_ms,
# itl_max_ms, decode "16 x EP8, DP attention", prefill, replica), where
# the result reference says JSON keys and CSV headers are its names.  They
# are now gp.infer_plan's, in its units (seconds), each declared there:
# the keys of `gpuplan run` printing gp.infer_plan's scalars are the same.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    for my $job (['mixtral-8x7b', '--gpu', 'h100-sxm', '--target', '1000'],
                 ['deepseek-v3', '--gpu', 'h200-sxm', '--weights', 'fp8', '--target', '20000'],
                 ['llama3-8b', '--gpu', 'h100-sxm', '--target', '20000']) {
        ($c, $o, $e) = run_gp('infer', @$job, '--format', 'json');
        is($c, 0, "$job->[0] --target json: runs") or diag $e;
        my $row = (eval { JSON::PP::decode_json($o) } || [{}])->[0];
        my $lua = "$dir/keys.lua";
        my %a = @$job[1 .. $#$job];
        my $w = $a{'--weights'} ? qq(, weights = "$a{'--weights'}") : '';
        write_file($lua, <<LUA);
local gp = require "gpuplan"
local r = require "gpuplan.results"
local p = gp.infer_plan{ model = "$job->[0]", gpu = "$a{'--gpu'}", target = $a{'--target'}$w }
for k, v in pairs(p) do
  if type(v) ~= "table" then
    print(k, r.BY_NAME[k] and r.BY_NAME[k].results.infer_plan and "declared" or "UNDECLARED")
  end
end
LUA
        ($c, my $lo, $e) = run_gp('run', $lua);
        is($c, 0, "$job->[0]: gp.infer_plan runs") or diag $e;
        my %lk = map { (split /\t/)[0] => (split /\t/)[1] } split /\n/, $lo;
        for my $k (sort keys %$row) {
            ok(exists $lk{$k} || $k eq 'prefill_layout' || $k eq 'itl_s',
               "$job->[0]: json key $k is gp.infer_plan's") or diag $lo;
        }
        ok(!grep({ $lk{$_} ne 'declared' } keys %lk), "$job->[0]: every plan key is declared")
            or diag $lo;
        ok(!exists $row->{$_}, "$job->[0]: no '$_' key") for qw(itl_ms ttft_ms itl_max_ms decode prefill replica);
        is($row->{itl_max}, 0.05, "$job->[0]: itl_max in seconds (the 50 ms default)");
        ok($row->{itl_s} > 0.02 && $row->{itl_s} <= 0.05, "$job->[0]: itl_s in seconds, within it");
    }
}

done_testing();
