# followups17: reviewers' user-facing problems, one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 2. A refused name is quoted as the user typed it: the resolve step
# lower-cased every name option's text (so --weights FP8 reads fp8) and
# the refusal then quoted 'bogus' for BOGUS.  Only a name the option
# reads is lower-cased now; an unknown name is a usage error, exit 2
# (--rollout-engine exited 1).
for my $t (['infer', [qw(llama3-8b --gpu h100-sxm --weights BOGUS)], qr/unknown weight format 'BOGUS'/],
           ['infer', [qw(llama3-8b --gpu h100-sxm --runtime BOGUS)], qr/--runtime must be .*\(got 'BOGUS'\)/],
           ['infer', [qw(llama3-8b --gpu h100-sxm --kv BOGUS)], qr/unknown kv dtype 'BOGUS'/],
           ['train', [qw(llama3-8b --gpu h100-sxm --precision BOGUS)], qr/unknown precision 'BOGUS'/],
           ['rl', [qw(qwen2.5-7b --gpu h100-sxm --gpus 16 --rollout-engine BOGUS)],
            qr/--rollout-engine must be vllm, hybrid or hf \(got 'BOGUS'\)/]) {
    my ($cmd, $args, $want) = @$t;
    ($c, $o, $e) = run_gp($cmd, @$args);
    is($c, 2, "$cmd @$args: exit 2") or diag $e;
    like($e, $want, "$cmd @$args: quoted as typed") or diag $e;
}
# names the option reads are still read in either case
for my $w (qw(FP8 GPTQ-G64 AWQ-G32-FP32 NF4-DQ)) {
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --weights), $w);
    is($c, 0, "--weights $w read") or diag $e;
    like($o, qr/\Q${\ lc $w}\E weights/, "--weights $w shown lower case") or diag $o;
}
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --runtime LLAMA.CPP --kv INT8));
is($c, 0, '--runtime LLAMA.CPP --kv INT8 read') or diag $e;

done_testing();
