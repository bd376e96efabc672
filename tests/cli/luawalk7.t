# What the seventh Lua walk found where the command line and gp.* answer
# the same job differently.
use strict;
use warnings;
use Test::More;
use JSON::PP ();
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. infer --target --format json: a dense model's row had the keys of a
# MoE model's less disagg, decode_gpus, prefill_gpus and prefill_layout,
# which gp.infer_plan returns for both (a dense plan is one colocated
# pool: disagg false, every GPU decodes, no prefill pool).
{
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '20000',
                          '--format', 'json');
    is($c, 0, 'dense --target json: runs') or diag $e;
    my $d = JSON::PP::decode_json($o)->[0];
    ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--target', '100000',
                          '--format', 'json');
    my $m = JSON::PP::decode_json($o)->[0];
    is(join(',', sort keys %$d), join(',', sort keys %$m), 'dense and MoE rows: the same keys');
    ok(exists $d->{prefill_layout} && !defined $d->{prefill_layout}, 'dense: prefill_layout null');
    is($d->{prefill_gpus}, 0, 'dense: no prefill pool');
    ok(!$d->{disagg}, 'dense: disagg false');
    # gp.infer_plan of the same job: the same GPUs, decode pool and batch
    write_file("$dir/t.lua", "local gp = require 'gpuplan'\n"
        . "local p = gp.infer_plan{model = 'llama3-8b', gpu = 'h100-sxm', target = 20000}\n"
        . "print(p.gpus, p.decode_gpus, p.prefill_gpus, tostring(p.disagg), p.batch)\n");
    ($c, $o, $e) = run_gp('run', "$dir/t.lua");
    is($o, join("\t", $d->{gpus}, $d->{decode_gpus}, $d->{prefill_gpus}, 'false', $d->{batch}) . "\n",
       'gp.infer_plan: the same row') or diag $e;
}

# 2. infer --memory past the engine's bound named the engine's key:
# "capacity must be a positive number of bytes up to 1e+15 (got 2e+15)".
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--memory', '2PB');
is($c, 1, '--memory 2PB: out of range, exit 1');
like($e, qr/--memory must be a size in \(0B, 1000TB\] \(got '2PB' = 2000TB\)/,
     '--memory named, its range said') or diag $e;

# 3. infer with a MoE serving option: --pp was dropped in silence (the
# serving model's layouts are ep x tp); refused, naming both flags.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '16', '--ep', '16',
                      '--pp', '2');
is($c, 2, 'infer --ep 16 --pp 2: a usage error');
like($e, qr/^gpuplan: infer: --pp 2: the MoE serving model \(--ep 16\) runs no pipeline stages/m,
     'both flags named') or diag $e;

done_testing();
