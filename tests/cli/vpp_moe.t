# The interleaved schedule's model chunks hold layers spread over the
# model (Megatron-Core get_transformer_layer_offset: chunk c of rank s
# starts at c x layers / vpp + s x layers / (pp x vpp)), so a model whose
# MoE layers alternate with dense ones (Llama 4 Maverick, moe.layer_step
# 2: layer i is MoE when i is odd) puts its MoE layers on some ranks only.
# At pp 4, vpp 12 a chunk is one layer and rank s holds s, s + 4, ...,
# s + 44: ranks 1 and 3 all 12 MoE, ranks 0 and 2 all dense.  The
# memory and the step follow it.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

sub json_of {
    my (@args) = @_;
    my ($c, $o, $e) = run_gp(@args, '--format', 'json');
    is($c, 0, "@args: exit 0") or diag $e;
    return $o;
}

sub num_of {
    my ($json, $re) = @_;
    return $json =~ $re ? $1 + 0 : -1;
}

# Weights of the most loaded stage, Maverick on 32 B200 at ep 8, pp 4,
# vpp 12 (dp 8, tp 1): stage 3, 12 MoE layers and the output layer.
# Hand count (tests/c/t_moe_step.c's parameters): attention 12 x
# 62,914,560 = 754,974,720; norms 496,640 x 12/48 = 124,160; routed and
# shared experts 12 x 16,231,956,480 / ep 8 = 24,347,934,720; routers
# 12 x 655,360 = 7,864,320; head 202,048 x 5,120 = 1,034,485,760; sum
# 26,145,383,680 parameters x 2 B (bf16) = 52,290,767,360 B.  Exact:
# integer counts well below 2^53.  Contiguous stages (no --vpp) hold 6 of
# each kind and are lighter.
my @mav = ('fit', 'llama4-maverick', '--gpu', 'b200', '--gpus', '32', '--ep', '8',
           '--pp', '4', '--stack', 'megatron');
my $j = json_of(@mav, '--vpp', '12');
is(num_of($j, qr/"stage":\s*(\d+)/), 3, 'vpp 12: the most loaded stage is rank 3');
is(num_of($j, qr/"bytes":\s*(\d+),\s*"name":\s*"weights"/), 52290767360,
   'its weights: 12 MoE layers and the head, 52,290,767,360 B');
my $flat = json_of(@mav);
ok(num_of($flat, qr/"bytes":\s*(\d+),\s*"name":\s*"weights"/) < 52290767360 * 0.7,
   'contiguous stages (6 MoE each): under 70% of that');

# The step's expert all-to-alls: at vpp 6 (chunks of 2 layers, one odd)
# every rank holds 6 MoE layers, at vpp 12 ranks 1 and 3 hold 12; the
# slowest stage's ep_comm doubles (the same layers' all-to-alls, none
# hidden without ep_overlap; per_step the same).  Tolerance 1e-6
# relative: the JSON's printed digits.
my @tr = ('train', 'llama4-maverick', '--gpu', 'b200', '--gpus', '256', '--ep', '64',
          '--pp', '4', '--stack', 'megatron');
my $ep6 = num_of(json_of(@tr, '--vpp', '6'), qr/"name":\s*"ep_comm",\s*"seconds":\s*([\d.eE+-]+)/);
my $ep12 = num_of(json_of(@tr, '--vpp', '12'), qr/"name":\s*"ep_comm",\s*"seconds":\s*([\d.eE+-]+)/);
ok($ep6 > 0 && abs($ep12 / $ep6 - 2) < 1e-6, "ep_comm vpp 12 / vpp 6 = 2 (got $ep12 / $ep6)");

done_testing();
