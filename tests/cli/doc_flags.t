# The hand-written docs (README.md and docs/*.md but the generated
# docs/cli.md) name gpuplan's options as its commands take them: every
# `--flag` in their prose is an option some command's --help lists (or
# its --no- form), or one of the other tools' flags named below, each with
# the tool it belongs to.  An option renamed or removed leaves its old
# name in the prose, which no example replays (tests/cli/readme.t runs the
# fenced examples; this covers the text around them).
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

# Flags of other programs the docs quote as their sources state them.
my %other = (
    '--attention-backend'         => 'SGLang (docs/serving.md)',
    '--backend'                   => 'trtllm-bench (docs/validation.md)',
    '--random-range-ratio'        => 'SGLang bench_serving (docs/validation.md)',
    '--moe-router-force-load-balancing' => 'Megatron-LM (docs/validation.md)',
    '--random-input-len'          => 'SGLang bench_serving (docs/serving.md)',
    '--random-output-len'         => 'SGLang bench_serving (docs/serving.md)',
    '--dataset-name'              => 'SGLang bench_serving (docs/validation.md)',
    '--max-concurrency'           => 'SGLang bench_serving (docs/validation.md)',
    '--dp'                        => 'SGLang launch_server (docs/validation.md)',
    '--finetune'                  => 'Megatron-LM (docs/validation.md)',
    '--tp-size'                   => 'SGLang (docs/serving.md)',
    '--enable-mixed-chunk'        => 'SGLang (docs/serving.md, docs/validation.md)',
    '--ep-num-redundant-experts'  => 'SGLang (docs/serving.md)',
    '--max-num-seqs'              => 'vLLM (docs/serving.md)',
    '--max-running-requests'      => 'SGLang (docs/serving.md)',
    '--recompute-granularity'     => 'Megatron-LM (docs/validation.md)',
    '--split-mode'                => 'llama.cpp (docs/validation.md)',
    '--dp-size'                   => 'SGLang (docs/validation.md)',
    '--checkpoint-activations'    => 'Megatron-DeepSpeed (docs/validation.md)',
    '--api-server-count'          => 'vLLM (docs/validation.md)',
    '--tokenizer-worker-num'      => 'SGLang (docs/validation.md)',
    '--request-rate'              => 'vLLM benchmark_serving.py (docs/validation.md)',
    '--sonnet-output-len'         => 'vLLM benchmark_serving.py (docs/validation.md)',
    '--ignore-eos'                => 'vLLM benchmark_serving.py (docs/validation.md)',
    '--dtype'                     => 'vLLM serve (docs/validation.md)',
    '--fixed-schedule'            => 'AIPerf (docs/validation.md)',
    '--osl'                       => 'AIPerf (docs/validation.md)',
    '--stream-interval'           => 'vLLM serve (docs/validation.md)',
    '--generation-config'         => 'vLLM serve (docs/validation.md)',
    '--disable-frontend-multiprocessing' => 'vLLM serve (docs/validation.md)',
    '--nnodes'                    => 'SGLang launch (docs/serving.md)',
    '--num-dataset-entries'       => 'AIPerf profile (docs/validation.md)',
    '--max-model-len'             => 'vLLM serve (docs/validation.md)',
    '--random-range-ratio'        => 'SGLang/vLLM bench_serving (docs/validation.md)',
    '--moe-router-force-load-balancing' => 'Megatron-LM (docs/validation.md)',
    '--random-input-len'          => 'SGLang bench_serving (docs/serving.md)',
    '--random-output-len'         => 'SGLang bench_serving (docs/serving.md)',
    '--dataset-name'              => 'SGLang bench_serving (docs/validation.md)',
    '--max-concurrency'           => 'SGLang bench_serving (docs/validation.md)',
    '--dp'                        => 'SGLang launch_server (docs/validation.md)',
    '--finetune'                  => 'Megatron-LM (docs/validation.md)',
    # dstack's vLLM 0.6.3 runs (docs/validation.md): the server's and
    # benchmark_serving.py's own flags as the source's files state them.
    '--request-rate'              => 'vLLM benchmark_serving (docs/validation.md)',
    '--dtype'                     => 'vLLM (docs/validation.md)',
    '--max-model-len'             => 'vLLM (docs/validation.md)',
    '--sonnet-output-len'         => 'vLLM benchmark_serving (docs/validation.md)',
    '--ignore-eos'                => 'vLLM benchmark_serving (docs/validation.md)',
);

# Every command's options, from its --help.
my %known = ('--help' => 1, '--version' => 1);
my ($c, $o, $e) = run_gp('--help');
my @cmds = $o =~ /^  ([a-z]+)\s{2,}/mg;
ok(@cmds >= 10, 'gpuplan --help lists the commands') or diag $o;
for my $cmd (@cmds) {
    ($c, $o, $e) = run_gp($cmd, '--help');
    is($c, 0, "gpuplan $cmd --help exits 0");
    for my $f ($o =~ /(--(?:\[no-\])?[a-z0-9][a-z0-9-]*)/g) {
        $f =~ s/\[no-\]//;
        $known{$f} = 1;
    }
}
ok(keys(%known) > 200, scalar(keys %known) . ' option names read from the commands\' --help');

my @docs = ('README.md', grep { $_ ne 'docs/cli.md' } glob('docs/*.md'));
my %seen_other;
for my $file (@docs) {
    open my $fh, '<', $file or die "$file: $!";
    my ($fence, @bad) = (0);
    while (my $line = <$fh>) {
        if ($line =~ /^```/) { $fence = !$fence; next }
        next if $fence;
        # a backticked flag: `--seq`, `--seq 4096`, `--vpp=2`
        for my $f ($line =~ /`(--[a-z0-9][a-z0-9-]*)(?=[ `=])/g) {
            (my $base = $f) =~ s/^--no-/--/;
            if ($other{$f}) { $seen_other{$f} = 1; next }
            push @bad, "$file:$.: $f" unless $known{$f} || $known{$base};
        }
    }
    close $fh;
    is(join(', ', @bad), '', "$file: every `--flag` in the prose is a gpuplan option");
}
# Each flag listed as another tool's is still quoted somewhere (a list
# entry nobody needs would hide a gpuplan option of that name).
for my $f (sort keys %other) {
    ok($seen_other{$f}, "$f ($other{$f}) is quoted in the docs");
    ok(!$known{$f}, "$f is not also a gpuplan option");
}

done_testing();
