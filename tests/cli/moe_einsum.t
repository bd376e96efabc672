# --moe-dispatcher einsum: DeepSpeed's MOELayer on the command line -- the
# S x E x C masks its dispatch and combine einsums keep for the backward,
# and the refusals where the layer is not DeepSpeed's.
use strict;
use warnings;
use Test::More;
use JSON::PP;
require './tests/cli/lib.pl';

my @job = ('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'deepspeed',
           '--kernels', 'fused', '--ep', '8', '--zero', '1', '--batch', '1', '--seq', '4096',
           '--recompute', 'full', '--format', 'json');

sub recompute_bytes {
    my ($d) = @_;
    my ($c, $o, $e) = run_gp(@job, '--moe-dispatcher', $d);
    is($c, 0, "--moe-dispatcher $d: exit 0") or diag $e;
    my $j = decode_json($o);
    my ($r) = grep { $_->{name} eq 'recompute' } @{ $j->{memory}{components} };
    return $r->{bytes};
}

# Full recompute rebuilds one MoE layer in the backward: with the einsum
# dispatcher it also holds the two S x E x C masks cast to bf16 (the
# dispatch's and the combine's saved operand).  S = 1 x 4096 tokens, E = 8,
# top-2, capacity factor 1: C = ceil(2 x 4096 / 8) = 1024, so 2 x 2 B x
# 4096 x 8 x 1024 = 134217728 B more.  Exact: nothing else differs.
my $a = recompute_bytes('alltoall');
my $b = recompute_bytes('einsum');
is($b - $a, 134217728, 'einsum: the two bf16 S x E x C masks, 134217728 B more');

my ($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8',
                         '--stack', 'megatron', '--ep', '8', '--moe-dispatcher', 'einsum');
is($c, 2, 'einsum on stack megatron: exit 2');
like($e, qr/--moe-dispatcher einsum is DeepSpeed's MOELayer \(deepspeed\/moe\); stack megatron does not run it: give --stack deepspeed/,
     'the refusal names the option and the stack');
($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--stack', 'deepspeed', '--ep', '8', '--zero', '1',
                      '--moe-dispatcher', 'einsum');
is($c, 2, 'einsum with the deepspeed stack\'s default eager kernels: exit 2');
like($e, qr/--moe-dispatcher einsum is DeepSpeed's MOELayer .*kernels eager runs the model's own MoE block: give --kernels fused/,
     'the refusal names the kernels');
($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--moe-dispatcher', 'einsums');
is($c, 2, 'an unknown dispatcher: exit 2');
like($e, qr/einsum/, 'the unknown-value error lists einsum');

done_testing();
