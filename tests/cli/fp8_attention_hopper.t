# --fp8-attention on Hopper is priced (cuDNN's FP8 kernel at its measured
# time over the 16-bit kernel's, engine/train_price.c); where no FP8
# kernel was measured it is refused by name with the exit it had (1), and
# --fp8-activations with adapters stays a usage error (2).
use strict;
use warnings;
use Test::More tests => 9;
require './tests/cli/lib.pl';

my @job = ('train', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--tp', '8',
           '--seq', '8192', '--global-batch', '8', '--stack', 'megatron',
           '--precision', 'fp8', '--method', 'pretrain');
my ($rc, $out, $err) = run_gp(@job, '--fp8-attention');
is($rc, 0, 'Hopper, head dim 128: priced');
like($out, qr/^step\s+\d/m, 'Hopper: a step is printed');
unlike($err, qr/fp8.attention/, 'Hopper: no refusal');

($rc, $out, $err) = run_gp('train', 'gpt-oss-120b', '--gpu', 'h100-sxm', '--gpus', '64',
                           '--ep', '8', '--stack', 'megatron', '--precision', 'fp8',
                           '--fp8-attention');
is($rc, 1, 'Hopper, head dim 64: exit 1');
like($err, qr/--fp8-attention on h100-sxm \(hopper\) is cuDNN's FP8 kernel, whose backward takes head dim 128 only; gpt-oss-120b's is 64/,
     'Hopper, head dim 64: names the option, the GPU and the head dim');

($rc, $out, $err) = run_gp('train', 'llama3-70b', '--gpu', 'l40s', '--gpus', '8', '--tp', '8',
                           '--stack', 'megatron', '--precision', 'fp8', '--fp8-attention');
is($rc, 1, 'Ada: exit 1');
like($err, qr/--fp8-attention is priced from cuDNN's FP8 attention kernels on Hopper and Blackwell; l40s is ada/,
     'Ada: names the option and the arch');

($rc, $out, $err) = run_gp(@job[0 .. $#job - 2], '--method', 'lora', '--fp8-activations');
is($rc, 2, 'lora with --fp8-activations: usage error, exit 2');
like($err, qr/--fp8-activations applies to full training, not to adapters \(lora\)/,
     'lora with --fp8-activations: names the option');
