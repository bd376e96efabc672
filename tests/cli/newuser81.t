# A first user's questions (round 81): labels and figures a command
# prints that read one way and meant another.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

# infer's "compute precision" line gives the achievable roofline's ridge
# (gp.infer's r.ridge): on the H100 at bf16, 989 TFLOP/s x 0.656 (the
# hopper bf16 GEMM fraction) over 3.35 TB/s x 0.84 (HBM) = 648.8 / 2.814
# = 230.6 FLOP/B, where the guide's and `roofline`'s peak ridge is 989 /
# 3.35 = 295.2.  It read "(ridge 231 FLOP/B)" beside the guide's "bf16
# ridge FLOP/B 295" for the same card.
my ($rc, $out) = run_gp('infer', 'llama3.1-8b', '--gpu', 'h100-sxm', '--batch', '1',
                        '--input', '512', '--output', '256');
is($rc, 0, 'infer llama3.1-8b on h100-sxm: priced');
like($out, qr/^compute precision\s+bf16 \(achievable ridge 231 FLOP\/B\)$/m,
     'infer: the ridge is said to be the achievable one');
my ($rc2, $roof) = run_gp('roofline', '--gpu', 'h100-sxm');
like($roof, qr/^bf16\s+989\.0\s+648\.8\s+295\.2\s+230\.6$/m,
     'roofline: 295.2 peak, 230.6 achievable -- the one infer gives');

# The defaults line names each option as it can be typed: Llama 3.1 8B's
# own modules keep q, k, v and gate, up apart (the catalog's split_proj
# "both"), which the option prices as --split-proj (true).  The line read
# "split_proj=both", which the command line refuses ("takes no value") and
# gp.train refuses ("split_proj must be true or false").
my @job = ('llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--seq', '2048');
($rc, $out) = run_gp('train', @job);
like($out, qr/^defaults: .*--split-proj \(llama3\.1-8b's own modules: q, k, v and gate, up linears of their own\)/m,
     'train: the default said as --split-proj');
unlike($out, qr/split_proj=both/, '... not as split_proj=both');
my ($step) = $out =~ /^step\s+([\d.]+)/m;
my ($rc3, $out3) = run_gp('train', @job, '--split-proj');
my ($step3) = $out3 =~ /^step\s+([\d.]+)/m;
ok(defined $step && defined $step3 && $step eq $step3, "--split-proj as the line says: the same step ($step s)");

# Every name=value the defaults line states is one the command line
# takes as its flag: re-run with each entry given, and it is accepted.
# "imbalance=auto" (MoE serving) was refused ("option '--imbalance'
# expects a number, got 'auto'"): it is said in words now.
sub entries {
    my ($o) = @_;
    my ($line) = $o =~ /^(?:defaults:|assumed) +(.*)$/m;
    return () unless defined $line;
    1 while $line =~ s/\([^()]*\)//g;
    return grep { /^[a-z][a-z0-9_]*=\S+$/ } map { s/^\s+|\s+$//gr } split /,/, $line;
}
for my $cmd (['infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--tp', '8', '--ep', '8',
              '--input', '2048', '--output', '512'],
             ['train', @job],
             # an RL step's memory: seq is prompt + response, which --seq
             # does not take beside --method grpo ("seq=1536" was refused)
             ['fit', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--method', 'grpo']) {
    my ($c0, $o0) = run_gp(@$cmd);
    like($o0, qr/imbalance: per step \(/, "$cmd->[0]: the imbalance said in words")
        if $cmd->[0] eq 'infer';
    like($o0, qr/ seq: 1536 \(prompt 512 \+ response 1024\)/, "fit --method grpo: seq said in words")
        if $cmd->[0] eq 'fit';
    my @e = entries($o0);
    ok(@e >= 5, "$cmd->[0]: " . scalar(@e) . " name=value entries on the line");
    for my $e (@e) {
        my ($n, $v) = split /=/, $e, 2;
        (my $flag = "--$n") =~ tr/_/-/;
        my ($c1, $o1, $e1) = run_gp(@$cmd, $flag, $v);
        is($c1, 0, "$cmd->[0]: $e given as $flag $v is taken") or diag($e1);
    }
}

# Memory bandwidth is headed as such: the card tables list GDDR cards (the
# RTX 4090's GDDR6X, 1.008 TB/s; the L40S's GDDR6) beside HBM ones, under
# a header that read "HBM TB/s".
my ($rc4, $cards) = run_gp('catalog', 'list', 'gpus');
like($cards, qr/^id\s+name\s+memory\s+memory TB\/s\s+bf16 TFLOPS/m, 'catalog list gpus: "memory TB/s"');
like($cards, qr/^rtx-4090\s.*\s1\.008\s/m, '... over the RTX 4090\'s GDDR6X');
my ($rc5, $guide) = run_gp('guide');
like($guide, qr/^GPU\s+memory\s+memory TB\/s\s+bf16 TFLOPS/m, 'guide: "memory TB/s"');
unlike($cards . $guide, qr/HBM TB\/s/, 'no "HBM TB/s" header');

done_testing();
