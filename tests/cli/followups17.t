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

# 3. Hybrid sharding's groups are whole nodes (PyTorch FSDP's
# dist.new_subgroups(gpus per node)): 12 GPUs on nodes of 8 leaked the
# engine's "6 gpus do not fill whole nodes of 4", naming no option.  A
# pipeline stage's GPUs (gpus / pp) fill whole nodes or share one evenly.
{
    my @j = qw(train llama3-8b --gpu h100-sxm --stack hf --fsdp hybrid_shard);
    ($c, $o, $e) = run_gp(@j, qw(--gpus 12));
    is($c, 2, 'hybrid_shard on 12 of 8-GPU nodes: a usage error, exit 2') or diag $e;
    like($e, qr/--fsdp hybrid_shard shards within each node of 8 GPUs, but --gpus 12 leaves a node part-filled.*give --gpus 8 or 16, or --fsdp full_shard/,
         '... naming --gpus and --fsdp') or diag $e;
    unlike($e, qr/do not fill whole nodes of/, '... not the engine\'s words');
    # 24 GPUs over pp 2: 12 a stage, 8 + 4 on the nodes
    ($c, $o, $e) = run_gp(@j, qw(--gpus 24 --pp 2));
    is($c, 2, 'hybrid_shard, 24 GPUs over pp 2: exit 2') or diag $e;
    like($e, qr/--gpus 24 over --pp 2 \(12 GPUs a stage\).*give --gpus 16 or 32/, '... the stage named') or diag $e;
    # whole nodes, or stages sharing a node evenly, or one node: taken
    for my $ok ([qw(--gpus 16)], [qw(--gpus 16 --pp 4)], [qw(--gpus 40 --pp 5)], [qw(--gpus 6 --tp 2)],
                [qw(--gpus 24 --tp 2)]) {
        ($c, $o, $e) = run_gp(@j, @$ok);
        is($c, 0, "hybrid_shard @$ok: taken") or diag $e;
    }
    # plan searches a count its layouts can place (12 as PP3 x DP4)
    ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm --gpus 12 --stack hf --fsdp hybrid_shard));
    is($c, 0, 'plan --gpus 12 --fsdp hybrid_shard: searched') or diag $e;
    like($o, qr/h100-sxm\s+12\s+TP\d+ PP3 /, '... at pp 3') or diag $o;
}

# 4. FP8 weights on a card without FP8 tensor cores: weight-only (vLLM's
# FP8 Marlin, W8A16) from compute capability 8.0, said on the defaults
# line; below it (Volta) none: an explicit --weights fp8 refused, a
# released FP8 checkpoint served converted to 16 bits, said.
{
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu a100-sxm-80gb --weights fp8));
    is($c, 0, 'A100 --weights fp8: priced') or diag $e;
    like($o, qr/fp8 weights run weight-only on a100-sxm-80gb \(no FP8 tensor cores\)/, '... weight-only, said') or diag $o;
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --weights fp8));
    unlike($o, qr/weight-only/, 'H100 --weights fp8: native, nothing said');
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu v100-sxm2-32gb --weights fp8));
    is($c, 1, 'V100 --weights fp8: refused, exit 1') or diag $e;
    like($e, qr/--weights fp8 on v100-sxm2-32gb: .*compute capability 8\.0.*give --weights fp16 or int8/, '... naming the floor') or diag $e;
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu mi250x --weights fp8));
    is($c, 1, 'MI250X --weights fp8 (no FP8, no Marlin on ROCm): refused') or diag $e;
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu v100-sxm2-32gb --gpus 32 --format json));
    like($o, qr/"weights=fp16 \(deepseek-v3's checkpoint is fp8, which v100-sxm2-32gb cannot run/, 'V100 deepseek-v3: fp16, said') or diag $o;
    unlike($o, qr/fp8 weights/, '... not priced at fp8');
}

# 5. --memory: text that is no finite number with a unit is a usage error
# (exit 2); a size that reads but is out of range exits 1 -- '9e10GB'
# (9e19 B, past a count of bytes) exited 2 beside '-1GB''s 1.  Sizes are
# shown in GB/TB, not 1000000000000000 B.
for my $t (['1e400GB', 2, qr/not a finite number/], ['abc', 2, qr/expected a number/],
           ['-1GB', 1, qr/must not be negative/], ['9e10GB', 1, qr/too large/],
           ['1e300TB', 1, qr/too large/], ['0GB', 1, qr/must be a size in \(0B, 1000TB\] \(got '0GB' = 0B\)/],
           ['2000TB', 1, qr/must be a size in \(0B, 1000TB\] \(got '2000TB'\)$/m]) {
    my ($m, $rc, $want) = @$t;
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --memory), $m);
    is($c, $rc, "--memory $m: exit $rc") or diag $e;
    like($e, $want, "--memory $m: said") or diag $e;
}

# 6. Numbers are numbers in JSON: plan's job echoed --gpus as typed,
# "gpus":"20"; catalog show's values "3.35e+12" as text.
{
    ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm --gpus 20 --format json));
    is($c, 0, 'plan --gpus 20 json') or diag $e;
    like($o, qr/"job":\{[^}]*"gpus":20[,}]/, 'job.gpus a number') or diag $o;
    ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm --gpus 8..32 --format json));
    like($o, qr/"job":\{[^}]*"gpus":\[8,16,32\]/, 'job.gpus 8..32: its counts, numbers') or diag $o;
    ($c, $o, $e) = run_gp(qw(catalog show h100-sxm --format json));
    is($c, 0, 'catalog show json') or diag $e;
    like($o, qr/\{"field":"mem_bw","value":3350000000000\}/, 'a catalog number stays a number') or diag $o;
    like($o, qr/\{"field":"arch","value":"hopper"\}/, '... text stays text');
    unlike($o, qr/"value":"[-+]?[0-9][0-9.eE+-]*"/, 'no number as a string') or diag $o;
}

done_testing();
