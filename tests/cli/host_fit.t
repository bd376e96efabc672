# An offload past its host's memory is the verdict, not a line beside
# "fits: yes" (engine/memory.c mem_host_fit; the bytes are derived in
# tests/lua/host_fit.t): train and fit say "fits: no (host memory: ...)",
# plan refuses the layouts and says why, the JSON carries the host's
# bytes.  Llama 3.1 405B, ZeRO-3 params+optimizer offload on 16 H100s:
# each DGX H100 holds its 8 GPUs' partitions, 8 x 472.48 = 3779.80 GiB,
# against its 2 TB = 1862.65 GiB.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();

my ($c, $o, $e);
my @job = ('llama3.1-405b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '3', '--offload',
           'params+optimizer', '--stack', 'deepspeed', '--recompute', 'full', '--seq', '512');
my $verdict = qr/fits: no \(host memory: the offload holds 3779\.8 GiB on a host of 8 GPUs, which has 1862\.6 GiB; the GPU's headroom 56\.1 GiB\)/;

($c, $o, $e) = run_gp('train', @job, '--method', 'full');
is($c, 0, 'train: runs') or diag $e;
like($o, qr/^memory: 15\.1 GiB of 79\.1 GiB per GPU; $verdict$/m, 'train: the verdict is the host') or diag $o;
like($o, qr/^does not fit: host memory: the offload holds 3779\.8 GiB/m, 'train: the refusal names the host') or diag $o;

($c, $o, $e) = run_gp('fit', @job);
like($o, qr/^$verdict$/m, 'fit: the verdict is the host') or diag $o;
($c, $o, $e) = run_gp('fit', @job, '--format', 'json');
my $j = JSON::PP::decode_json($o);
ok(!$j->{fits} && $j->{host_need} == 4058533888000 && $j->{host_memory} == 2e12
   && $j->{host_ranks} == 8 && $j->{host_system} eq 'dgx-h100',
   'fit json: fits false, the host bytes, ranks and system') or diag $o;

($c, $o, $e) = run_gp('train', @job, '--method', 'full', '--format', 'json');
$j = JSON::PP::decode_json($o);
ok(!$j->{fits} && $j->{memory}{host_need} == 4058533888000 && $j->{why} =~ /^host memory:/,
   'train json: fits false, why the host') or diag $o;

($c, $o, $e) = run_gp('plan', @job);
like($o, qr/^no layout fits \(39 layouts past the host memory: the least holds 3719\.1 GiB of offload on one host, which has 1862\.6 GiB\)$/m,
     'plan: the layouts are refused by the host, and it says so') or diag $o;
like($o, qr/^searched: h100-sxm 39 layouts: .*, 0 fit, 39 past the host memory$/m,
     'plan: the searched line counts them') or diag $o;

# 70B on one node: 1314.17 GiB within 1862.65: the GPU's own verdict.
($c, $o, $e) = run_gp('fit', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--offload', 'params+optimizer', '--stack', 'deepspeed');
like($o, qr/^fits: no \(short by 2\.3 GiB; largest term activations/m, '70B on 8: the GPU is the reason, not the host') or diag $o;

done_testing();
