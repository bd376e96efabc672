# Hardening round 77: inputs a new user gives that were taken silently.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();
require JSON::PP;

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

open my $fh, '<', 'validation/cases.json' or die $!;
my $all = JSON::PP->new->decode(do { local $/; <$fh> });
close $fh;
my %by = map { $_->{id} => $_ } @$all;

# 1. A case's hardware.inter_node that no catalog fabric has ('ib-ndr',
# for ib-ndr-400) was read only where the case spans nodes (train and
# rl), and there named as the engine's option ("train: nic_fabric:
# unknown fabric ...", no file or line); a memory case, or a case on one
# node, was priced with it unread (exit 0, a prediction).  Every kind now
# refuses it as hardware.gpu is refused: the reason names FILE:LINE, the
# case and the field.
for my $t (['bloom176b-mem-per-gpu', 'memory, 384 GPUs'],
           ['litgpt-infer-llama2-13b-bf16-a100-40gb-tokps', 'infer, one GPU'],
           ['coll-allreduce-gb200-4g-128MiB-95d5f871', 'collective, one node'],
           ['bloom176b-train-tflops', 'train, 48 nodes'],
           ['nemo-rl-0.4-grpo-llama3.1-8b-h100-16-onpolicy', 'rl, 2 nodes']) {
    my ($id, $what) = @$t;
    my $case = JSON::PP->new->decode(JSON::PP->new->encode($by{$id}));
    ok($case, "$id is shipped") or next;
    $case->{hardware}{inter_node} = 'ib-ndr';
    my $text = JSON::PP->new->canonical->pretty->encode([$case]);
    my @lines = split /\n/, $text;
    my ($want) = grep { $lines[$_ - 1] =~ /"inter_node" : "ib-ndr"/ } 1 .. @lines;
    my $f = "$dir/$id.json";
    open my $out, '>', $f or die $!;
    print $out $text;
    close $out;
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    like($o, qr/^\Q$id\E,[^,]*,[^,]*,[^,]*,,,,,"?\Q$f\E:$want: case '\Q$id\E': field 'hardware\.inter_node': unknown fabric 'ib-ndr'/m,
         "$what: not predicted, the reason names FILE:$want and the field") or diag $o, $e;
}
# A fabric the catalog has still prices (the shipped memory case, as is).
{
    my $f = "$dir/good.json";
    open my $out, '>', $f or die $!;
    print $out JSON::PP->new->canonical->pretty->encode([$by{'bloom176b-mem-per-gpu'}]);
    close $out;
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    like($o, qr/^bloom176b-mem-per-gpu,memory,peak_memory_gb,60,[0-9.]+,/m,
         'the case with its catalog fabric (opa-100) is predicted') or diag $o, $e;
}

done_testing();
