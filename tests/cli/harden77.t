# Hardening round 77: inputs a new user gives that were taken silently.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();
require JSON::PP;

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

my $all = shipped_cases();
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

# 2. hardware.intra_node is read by the collective predictor alone (as
# gpuplan comm --fabric); an infer, train, rl or memory case is priced on
# the card's own scale-up fabric.  A case stating another (two RTX 4090s
# on an NVLink bridge they do not have) was priced on PCIe in silence,
# and an id no catalog fabric has ('pcie-4') was taken unread.  Both are
# now reasons naming FILE:LINE and the field; the shipped rows, which
# state the card's own (rtx-4090: pcie4), are priced as before.
{
    my $base = $by{'llmperfbench-vllm-llama2-70b-awq-2xrtx4090'};
    my @cases;
    for my $v (['same', 'pcie4'], ['other', 'nvlink-bridge-ga102'], ['typo', 'pcie-4']) {
        my $case = JSON::PP->new->decode(JSON::PP->new->encode($base));
        $case->{id} = "intra-$v->[0]";
        $case->{hardware}{intra_node} = $v->[1];
        push @cases, $case;
    }
    my $text = JSON::PP->new->canonical->pretty->encode(\@cases);
    my @lines = split /\n/, $text;
    my ($other) = grep { $lines[$_ - 1] =~ /"intra_node" : "nvlink-bridge-ga102"/ } 1 .. @lines;
    my ($typo) = grep { $lines[$_ - 1] =~ /"intra_node" : "pcie-4"/ } 1 .. @lines;
    my $f = "$dir/intra.json";
    open my $out, '>', $f or die $!;
    print $out $text;
    close $out;
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    like($o, qr/^intra-same,infer,decode_tokens_per_s,23\.8,[0-9.]+,/m,
         "intra_node the card's own: predicted") or diag $o, $e;
    like($o, qr/\Q$f\E:$other: case 'intra-other': field 'hardware\.intra_node': 'nvlink-bridge-ga102' is not rtx-4090's own scale-up fabric \(pcie4\): infer cases are priced on the card's/m,
         "another fabric: not predicted, FILE:$other and the field named") or diag $o;
    like($o, qr/\Q$f\E:$typo: case 'intra-typo': field 'hardware\.intra_node': unknown fabric 'pcie-4'/m,
         "an unknown fabric: FILE:$typo and the field named") or diag $o;
}

# 3. hardware.system (a train case's node, gp.train's system) was read by
# the train predictor alone and checked by no one: an id no catalog
# system has, or a system holding another card, was refused by gp.train
# naming neither the file, the line nor the field; an infer case stating
# one was priced on the card's default node in silence; and intra_node
# was held to the card's fabric (nvlink4) where the case is priced on
# the system's (nvlink4-hgx4).  Each is now a reason naming FILE:LINE and
# the field; the shipped row, as is, is predicted.
{
    my $train = $by{'kempnerforge-mfu-h200-7b-4g-tp2-fsdp2'};
    my $infer = $by{'litgpt-infer-llama2-13b-bf16-a100-40gb-tokps'};
    my @cases;
    my $mk = sub {
        my ($base, $id, %hw) = @_;
        my $case = JSON::PP->new->decode(JSON::PP->new->encode($base));
        $case->{id} = $id;
        $case->{hardware}{$_} = $hw{$_} for keys %hw;
        push @cases, $case;
    };
    $mk->($train, 'sys-asis');
    $mk->($train, 'sys-typo', system => 'hgx-h200-4gp');
    $mk->($train, 'sys-card', gpu => 'h100-sxm');
    $mk->($infer, 'sys-infer', system => 'hgx-h200-4gpu');
    $mk->($train, 'sys-intra-card', intra_node => 'nvlink4');
    $mk->($train, 'sys-intra-own', intra_node => 'nvlink4-hgx4');
    my $text = JSON::PP->new->canonical->pretty->encode(\@cases);
    my @lines = split /\n/, $text;
    # the line of a case's field: the first line matching $re after the
    # case's id
    my $line = sub {
        my ($id, $re) = @_;
        my ($at) = grep { $lines[$_ - 1] =~ /"id" : "\Q$id\E"/ } 1 .. @lines;
        my ($start) = grep { $lines[$_ - 1] =~ /^   \{/ && $_ <= $at } reverse 1 .. @lines;
        my ($l) = grep { $lines[$_ - 1] =~ $re } $start .. @lines;
        return $l;
    };
    my $f = "$dir/system.json";
    open my $out, '>', $f or die $!;
    print $out $text;
    close $out;
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    like($o, qr/^sys-asis,train,step_time_s,2\.52,[0-9.]+,/m,
         'the shipped KempnerForge row, as is: predicted') or diag $o, $e;
    like($o, qr/^sys-intra-own,train,step_time_s,2\.52,[0-9.]+,/m,
         "intra_node the system's own fabric: predicted") or diag $o, $e;
    my $l = $line->('sys-typo', qr/"system" : "hgx-h200-4gp"/);
    like($o, qr/\Q$f\E:$l: case 'sys-typo': field 'hardware\.system': unknown system 'hgx-h200-4gp'/m,
         "an unknown system: FILE:$l and the field named") or diag $o;
    $l = $line->('sys-card', qr/"system" : /);
    like($o, qr/\Q$f\E:$l: case 'sys-card': field 'hardware\.system': 'hgx-h200-4gpu' holds h200-sxm, not hardware\.gpu h100-sxm/m,
         "a system holding another card: FILE:$l and the field named") or diag $o;
    $l = $line->('sys-infer', qr/"system" : /);
    like($o, qr/\Q$f\E:$l: case 'sys-infer': field 'hardware\.system': read by train cases alone/m,
         "an infer case's system: FILE:$l, not priced on another node in silence") or diag $o;
    $l = $line->('sys-intra-card', qr/"intra_node" : "nvlink4"/);
    like($o, qr/\Q$f\E:$l: case 'sys-intra-card': field 'hardware\.intra_node': 'nvlink4' is not system hgx-h200-4gpu's own scale-up fabric \(nvlink4-hgx4\)/m,
         "intra_node the card's fabric where the system's is priced: FILE:$l") or diag $o;
}

done_testing();
