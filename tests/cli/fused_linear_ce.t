# --fused-linear-ce with a stack Liger-Kernel cannot patch (Megatron-Core's
# output layer and loss): refused by fit, train and plan alike, exit 2 (two
# options that never go together), naming --stack as the user typed it or,
# where the stack is the method's default, the default.  (Their Lua side:
# tests/lua/fused_linear_ce.t.)
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @job = ('llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--fused-linear-ce');
for my $cmd ('fit', 'train', 'plan') {
    my ($c, $o, $e) = run_gp($cmd, @job, '--stack', 'megatron');
    is($c, 2, "$cmd --stack megatron --fused-linear-ce: exit 2");
    like($e, qr/^gpuplan: $cmd: --fused-linear-ce is Liger-Kernel's, which patches transformers' models; --stack megatron runs Megatron-Core's own output layer and loss: give --stack hf or deepspeed$/m,
         "$cmd: names --stack as typed");
}
# plan's default method is pretrain, whose default stack is megatron: the
# refusal says so, where it read as a --stack megatron the user never typed.
my ($c, $o, $e) = run_gp('plan', @job);
is($c, 2, 'plan --fused-linear-ce (default stack megatron): exit 2');
like($e, qr/^gpuplan: plan: --fused-linear-ce is Liger-Kernel's, which patches transformers' models; the default stack of --method pretrain, megatron, runs Megatron-Core's own output layer and loss: give --stack hf or deepspeed$/m,
     '... names the default, not a --stack typed');
($c, $o, $e) = run_gp('plan', @job, '--stack', 'hf', '--top', '1');
is($c, 0, 'plan --fused-linear-ce --stack hf: priced') or diag $e;
done_testing();
