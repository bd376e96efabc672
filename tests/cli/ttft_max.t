# gpuplan infer --ttft-max: the TTFT bound beside --itl-max (its paths in
# tests/lua/ttft_max.t; here the command line's: the flag's unit and
# range, where it applies, its column, its refusal).
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @job = ('infer', 'llama3.1-70b', '--gpu', 'h100-sxm', '--input', '4096', '--output', '512',
           '--target', '20000');

# Milliseconds in (0, 1 h], as --itl-max: 0, -5 and an hour and a ms
# refused in the flag's words, exit 1.
for my $bad (['0', '0'], ['-5', '-5'], ['3600001', '3600001']) {
    my ($c, $o, $e) = run_gp(@job, '--ttft-max', $bad->[0]);
    is($c, 1, "--ttft-max $bad->[0]: exit 1");
    like($e, qr/^gpuplan: infer: --ttft-max must be a number of milliseconds in \(0, 3600000\] \(got $bad->[1]\)$/m,
         "--ttft-max $bad->[0]: names the flag, its unit and its bound");
}
# Not a number: a usage error, exit 2.
my ($c, $o, $e) = run_gp(@job, '--ttft-max', 'abc');
is($c, 2, '--ttft-max abc: exit 2');

# A time with its unit reads as --itl-max's does (options.quantity):
# 250ms and 0.25s are the bare 250, the same table byte for byte (it was
# a usage error, 'expects a number'); a negative time reads and is out of
# range (exit 1); '0x10' is the number reader's usage error (exit 2).
{
    my ($c0, $o0) = run_gp(@job, '--ttft-max', '250');
    is($c0, 0, '--ttft-max 250: exit 0');
    for my $u ('250ms', '0.25s') {
        my ($c1, $o1, $e1) = run_gp(@job, '--ttft-max', $u);
        is($c1, 0, "--ttft-max $u: exit 0");
        is($o1, $o0, "--ttft-max $u: the table of --ttft-max 250");
    }
    my ($c2, $o2, $e2) = run_gp(@job, '--ttft-max', '-5ms');
    is($c2, 1, '--ttft-max -5ms: exit 1');
    like($e2, qr/--ttft-max: bad time '-5ms': must not be negative/, '... names the flag and the text');
    my ($c3) = run_gp(@job, '--ttft-max', '0x10');
    is($c3, 2, '--ttft-max 0x10: exit 2');
}

# Without --target or a MoE serving option nothing reads it: refused (as
# --itl-max is), not dropped.
($c, $o, $e) = run_gp('infer', 'llama3.1-70b', '--gpu', 'h100-sxm', '--ttft-max', '300');
is($c, 2, '--ttft-max without --target: exit 2');
like($e, qr/^gpuplan: infer: --ttft-max needs --target or the MoE serving options \(--ep N, --dp-attention, --disagg \.\.\.: 'serving a MoE model across many GPUs' in 'gpuplan infer --help'\)$/m, '... says what it needs');

# The bound shown beside the ITL limit; without it the table is as before
# (no such column).
($c, $o, $e) = run_gp(@job);
is($c, 0, 'no bound: exit 0') or diag $e;
unlike($o, qr/TTFT limit ms/, 'no bound: no TTFT limit column');
my ($ttft0) = $o =~ /^\s*20000\s+50\.0\s+\d+\s+TP\d+\s+\d+\s+\d+\s+[\d.]+\s+(\d+)\s/m;
ok(defined $ttft0 && $ttft0 > 250, "the unbounded plan's TTFT is over 250 ms") or diag $o;
($c, $o, $e) = run_gp(@job, '--ttft-max', '250');
is($c, 0, '--ttft-max 250: exit 0') or diag $e;
like($o, qr/TTFT ms\s+TTFT limit ms\s+cost\/Mtok/, 'the TTFT limit column after TTFT ms');
my ($ttft1) = $o =~ /^\s*20000\s+50\.0\s+\d+\s+TP\d+\s+\d+\s+\d+\s+[\d.]+\s+(\d+)\s+250\s/m;
ok(defined $ttft1 && $ttft1 <= 250, 'the plan shown is within 250 ms') or diag $o;

# csv and json: gp.infer_plan's ttft_max (s) after itl_max.
($c, $o, $e) = run_gp(@job, '--ttft-max', '250', '--format', 'csv');
like($o, qr/^target,itl_max,ttft_max,gpus,disagg,/m, 'csv: ttft_max after itl_max');
like($o, qr/^20000,0\.05,0\.25,/m, 'csv: in seconds');

# A bound no layout meets: exit 1, the quickest TTFT said (a TP8 replica
# prefills the 4096-token prompt in no less than 70.9 ms of compute:
# tests/lua/ttft_max.t).
($c, $o, $e) = run_gp(@job, '--ttft-max', '60');
is($c, 1, '--ttft-max 60: exit 1');
like($e, qr/^gpuplan: infer: no replica meets TTFT 60 ms \(TP8, the quickest of the sizes tried: one prompt's prefill takes [\d.]+ ms\)$/m,
     '--ttft-max 60: refused with the quickest replica\'s TTFT');

# A MoE model's search: the same refusal's shape, the layout's.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--weights', 'fp8', '--input', '4096',
                      '--output', '1536', '--target', '100000', '--ttft-max', '300');
is($c, 1, 'MoE --ttft-max 300: exit 1');
like($e, qr/^gpuplan: infer: no layout meets ITL 50 ms and TTFT 300 ms: the quickest first token takes [\d.]+ ms \(/m,
     'MoE: refused with the quickest first token');

done_testing();
