# What a fourth new-user walk found: each input said the wrong thing,
# nothing, or something a reader could not act on.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);

# 1. A catalog lookup's refusal named neither the command nor the flag:
# train, fit, plan and infer said "gpuplan: unknown gpu 'x'", where comm
# said "comm: --gpu: unknown gpu 'x'".
for my $cmd (['train', 'llama3-8b', '--gpus', '8'], ['fit', 'llama3-8b'], ['plan', 'llama3-8b'],
             ['infer', 'llama3-8b'], ['rl', 'qwen2.5-7b'], ['roofline']) {
    my ($name, @rest) = @$cmd;
    ($c, $o, $e) = run_gp($name, @rest, '--gpu', 'no-such-card');
    is($c, 2, "$name --gpu no-such-card: exit 2 (an unknown catalog name: a usage error)");
    like($e, qr/^gpuplan: \Q$name\E: --gpu: unknown gpu 'no-such-card' \(see 'gpuplan catalog list gpus'\)$/m,
         "$name: names the command and --gpu") or diag $e;
}
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--system', 'no-such-node');
like($e, qr/^gpuplan: train: --system: unknown system 'no-such-node'/m, 'train --system: names it') or diag $e;
($c, $o, $e) = run_gp('fit', 'no-such-model', '--gpu', 'h100-sxm');
like($e, qr/^gpuplan: fit: unknown model 'no-such-model'/m, 'fit MODEL: names the command') or diag $e;
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'no-such-model');
like($e, qr/^gpuplan: roofline: --model: unknown model 'no-such-model'/m, 'roofline --model: names it') or diag $e;

# 2. An id of another catalog table, or a list where one id goes, was
# refused as a misspelling ("unknown gpu 'dgx-h100' (see ...)"): it says
# what the id is.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'dgx-h100', '--gpus', '8');
like($e, qr/^gpuplan: train: --gpu: unknown gpu 'dgx-h100': that is a system, not a gpu/m,
     'a system given as --gpu') or diag $e;
($c, $o, $e) = run_gp('fit', 'h100-sxm', '--gpu', 'llama3-8b');
like($e, qr/^gpuplan: fit: unknown model 'h100-sxm': that is a gpu, not a model/m,
     'a card given as the model') or diag $e;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'hopper');
like($e, qr/unknown gpu 'hopper': that is an arch, not a gpu/, 'an arch, with its article') or diag $e;
($c, $o, $e) = run_gp('comm', '--system', 'h100-sxm');
like($e, qr/^gpuplan: comm: --system: unknown system 'h100-sxm': that is a gpu, not a system/m,
     'a card given as --system') or diag $e;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm,a100-sxm-80gb', '--gpus', '8');
like($e, qr/^gpuplan: train: --gpu: unknown gpu 'h100-sxm,a100-sxm-80gb': one gpu here, not a list \(plan and infer compare several\)$/m,
     'a list of cards where one goes') or diag $e;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxmm');
like($e, qr/unknown gpu 'h100-sxmm' \(did you mean .*h100-sxm/, 'a misspelling still gets suggestions') or diag $e;

# 3. An output file in a directory that does not exist failed only when
# written: comm --svg and infer --sweep-batch --svg printed their whole
# table, then exited 1.  Now refused before anything prints.
for my $cmd (['comm', '--gpu', 'h100-sxm', '--gpus', '8'],
             ['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--sweep-batch'],
             ['roofline', '--gpu', 'h100-sxm']) {
    ($c, $o, $e) = run_gp(@$cmd, '--svg', 'no-such-dir-w4/x.svg');
    is($c, 1, "$cmd->[0] --svg into a missing directory: exit 1");
    is($o, '', "$cmd->[0]: nothing printed before the refusal");
    like($e, qr/^gpuplan: $cmd->[0]: --svg: cannot write 'no-such-dir-w4\/x.svg': its directory 'no-such-dir-w4' does not exist$/m,
         "$cmd->[0]: names the directory") or diag $e;
}
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--gpus', '8', '--svg', 'README.md/x.svg');
like($e, qr/'README.md' is not a directory/, 'a file where the directory goes') or diag $e;

# 4. A case file (or config.json) that is not JSON was placed by the
# decoder's "at character 58", an offset into the whole text: now
# FILE:LINE and the column.  The broken pair is on line 5, from column 8.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    write_file("$dir/cases.json", qq([\n{"id": "x",\n "kind": "train",\n "model": "llama3-8b",\n"oops" "a"}]\n));
    ($c, $o, $e) = run_gp('validate', "$dir/cases.json");
    is($c, 1, 'validate a broken case file: exit 1');
    like($e, qr/^gpuplan: \Q$dir\E\/cases.json:5: invalid JSON: Expected colon but found T_STRING at column 8$/m,
         'names file:line and the column') or diag $e;
}

# 5. catalog check and catalog --explain print sentences; a --format json
# there printed the text with exit 0, as if honoured (validate --explain
# already refuses it).
for my $args (['check', 'catalog', '--format', 'json'], ['--explain', 'h100-sxm', '--format', 'csv'],
              ['show', 'h100-sxm', '--explain', '--format', 'json']) {
    ($c, $o, $e) = run_gp('catalog', @$args);
    is($c, 2, "catalog @$args: a usage error");
    is($o, '', "catalog @$args: no text on stdout");
    like($e, qr/^gpuplan: catalog: (check|--explain) prints a sentence a line; it takes no --format \(list and show do\)$/m,
         "catalog @$args: says why") or diag $e;
}
($c, $o, $e) = run_gp('catalog', 'check', 'catalog', '--format', 'text');
is($c, 0, 'catalog check --format text: the default, still taken') or diag $e;

# 6. A value given to a flag that takes none ("--sweep-batch 1,8") became
# a second argument, refused as "infer: one MODEL at a time": the message
# did not say where the extra argument came from.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--sweep-batch', '1,8');
is($c, 2, 'infer --sweep-batch 1,8: a usage error');
like($e, qr/^gpuplan: infer: one MODEL at a time \('1,8' follows --sweep-batch, which takes no value\)$/m,
     'names the value and the flag') or diag $e;
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--per-card', '8');
like($e, qr/^gpuplan: plan: expected one MODEL id \('8' follows --per-card, which takes no value\)$/m,
     'plan --per-card 8') or diag $e;
# not said where the extra argument did not follow a flag
($c, $o, $e) = run_gp('train', '--no-flash', 'llama3-8b', 'extra', '--gpu', 'h100-sxm');
like($e, qr/^gpuplan: train: expected one MODEL id$/m, 'an extra word after the model: as before') or diag $e;
# nor on another usage error: the model after a flag is the model
($c, $o, $e) = run_gp('train', '--no-flash', 'llama3-8b', '--gpus', '8');
like($e, qr/^gpuplan: train: --gpu ID is required$/m, 'the model after --no-flash is no stray value') or diag $e;

# 7. plan --format csv with no layout that fits printed the text title
# and "no layout fits" on stdout: not a CSV.  Now the header alone, the
# reason on stderr.  (70B pre-training on one 24 GB L4 cannot fit.)
($c, $o, $e) = run_gp('plan', 'llama3-70b', '--gpu', 'l4', '--gpus', '1', '--format', 'csv');
is($c, 0, 'plan csv, nothing fits: answers');
is($o, "gpu,gpus,layout,step_s,step_s_lo,step_s_hi,mfu,days,days_lo,days_hi,cost,cost_lo,cost_hi,currency,mem_gib\n",
   'the CSV header alone, as with rows') or diag $o;
# (the line says how far the nearest layout is: tests/cli/followups4.t)
like($e, qr/^gpuplan: note: plan: no layout fits \(the nearest layout needs [\d.]+ GiB per GPU, short by [\d.]+ GiB\)$/m,
     'the reason on stderr') or diag $e;
($c, $o, $e) = run_gp('plan', 'llama3-70b', '--gpu', 'l4', '--gpus', '1');
like($o, qr/^no layout fits \(the nearest layout needs [\d.]+ GiB per GPU, short by [\d.]+ GiB\)$/m,
     'text: still said on stdout');

# 8. infer --sweep-batch and --target on a card the model does not fit
# printed the text "does not fit: ..." line under --format csv and json.
# Llama 3 70B in bf16 (141 GB of weights) on one 80 GB H100 cannot fit.
# (--tp 1: without it --target searches TP up to a node, and TP4 replicas
# serve it: tests/cli/densetarget.t)
for my $x (['--sweep-batch'], ['--target', '1000', '--tp', '1']) {
    ($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', @$x, '--format', 'csv');
    is($c, 0, "infer @$x csv, not fitting: an answer");
    like($o, qr/\Afits,why\nno,"needs 144\.55 GB per GPU .*"\n\z/s, "infer @$x csv: one record, fits and why") or diag $o;
    ($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', @$x, '--format', 'json');
    like($o, qr/\A\{"fits":false,"why":"needs 144\.55 GB per GPU [^"]*"\}\n\z/, "infer @$x json: one object") or diag $o;
    ($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', @$x);
    like($o, qr/^does not fit: needs 144\.55 GB/, "infer @$x text: as before");
}

# 9. train's title said "(1 micro-batches of 1)" where each rank runs one.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--global-batch', '8');
like($o, qr/, global batch 8 \(1 micro-batch of 1\)$/m, 'one micro-batch, singular') or diag $o;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--global-batch', '16');
like($o, qr/, global batch 16 \(2 micro-batches of 1\)$/m, 'two, plural');

# 10. roofline --model --format csv on a card the model does not fit wrote
# the text "does not fit one l4: ..." line as the CSV.  Now the operators'
# header without rows, the reason on stderr.  (70B bf16 weights, 141 GB,
# on one 24 GB L4.)
($c, $o, $e) = run_gp('roofline', '--gpu', 'l4', '--model', 'llama3-70b', '--format', 'csv');
is($c, 0, 'roofline csv, not fitting: an answer');
is($o, "phase,name,count,intensity,tflops,bound,time_us\n", 'the operators\' header alone') or diag $o;
like($e, qr/^gpuplan: note: roofline: llama3-70b does not fit one l4: needs 144\.46 GB per GPU/m, 'the reason on stderr') or diag $e;
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama3-8b', '--format', 'csv');
like($o, qr/\Aphase,name,count,intensity,tflops,bound,time_us\nprefill,attn_norm,32,/, 'a fitting model: its rows under the same header') or diag $o;

# 11. fit --kv with a training method was taken and ignored: a training
# step holds no KV cache (the RL methods' rollout engines do).
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'full', '--kv', 'fp8');
is($c, 2, 'fit --method full --kv fp8: a usage error');
like($e, qr/^gpuplan: fit: --kv applies to --method infer\|grpo\|ppo$/m, 'names the methods that hold one') or diag $e;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--kv', 'fp8');
is($c, 0, 'fit --method infer --kv fp8: taken') or diag $e;
($c, $o, $e) = run_gp('fit', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3', '--method', 'grpo', '--kv', 'fp8');
is($c, 0, 'fit --method grpo --kv fp8: taken (the rollout engines\' cache)') or diag $e;

# 12. docs/output.md said every CSV header names its columns as the JSON
# does, citing comm's busbw_gbps; comm's JSON key is busbw, in bytes/s.
# The text now says so; held here: the same row, GB/s = bytes/s / 1e9.
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--gpus', '8', '--min', '1MiB', '--max', '1MiB', '--format', 'csv');
my ($csv_busbw) = $o =~ /^1048576,\d+,[\d.]+,[\d.]+,([\d.]+),/m;
like($o, qr/^bytes,count,time_us,algbw_gbps,busbw_gbps,algo,proto,time_lo_us,time_hi_us$/m, 'comm CSV: the GB/s columns name their unit');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--gpus', '8', '--min', '1MiB', '--max', '1MiB', '--format', 'json');
my ($json_busbw) = $o =~ /"busbw":([\d.e+]+)/;
ok(defined $csv_busbw && defined $json_busbw && abs($json_busbw / 1e9 - $csv_busbw) < 0.006,
   "comm JSON busbw is bytes/s: $json_busbw / 1e9 = the CSV's $csv_busbw (to its 2 decimals)");
{
    open my $fh, '<', 'docs/output.md' or die;
    local $/; my $doc = <$fh>;
    like($doc, qr/comm's `algbw_gbps` and `busbw_gbps` are GB\/s\s+where its JSON's `algbw` and `busbw` are bytes\/s/, 'docs/output.md says so');
}

# 13. train --sp at tp 1 titled its layout "zero 0, sp" (and JSON sp:
# true) where plan names the same layout without SP: with no TP group
# there is nothing to split, and Megatron turns it off.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron', '--sp');
like($o, qr/^llama3-8b on 8 x h100-sxm \(tp 1, pp 1, dp 8, cp 1, zero 0\), /m, 'tp 1: no sp in the title') or diag $o;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron', '--sp', '--format', 'json');
like($o, qr/"sp":false/, 'tp 1: JSON sp false');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron', '--sp', '--tp', '2');
like($o, qr/\(tp 2, pp 1, dp 4, cp 1, zero 0, sp\)/, 'tp 2: sp as before');

# 14. validate on a file of no cases, or --kind matching none of a file's,
# printed empty tables and nothing else: now a note on stderr says so
# (still exit 0, the empty frame on stdout as before).
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/empty.json');
is($c, 0, 'an empty case list: exit 0 as before');
like($o, qr/^Summary by kind/m, 'the frame as before');
is($e, "gpuplan: note: validate: tests/fixtures/validation/empty.json holds no cases\n", 'said on stderr');
($c, $o, $e) = run_gp('validate', '--kind', 'rl', 'tests/fixtures/validation/mini.json');
like($e, qr/^gpuplan: note: validate: no rl case in tests\/fixtures\/validation\/mini.json$/m, '--kind that keeps none: said') or diag $e;

# 15. A Hugging Face config.json given as MODEL to fit or train (model
# params takes one) was "unknown model 'config.json' (see catalog list)":
# the message now says how to import it.
($c, $o, $e) = run_gp('fit', 'tests/fixtures/hf/llama-3.1-8b.json', '--gpu', 'h100-sxm');
is($c, 2, 'fit CONFIG.json: exit 2, an id the catalog does not hold (a usage error)');
like($e, qr{^gpuplan: fit: unknown model 'tests/fixtures/hf/llama-3\.1-8b\.json': a config\.json is imported first: gpuplan model import tests/fixtures/hf/llama-3\.1-8b\.json --id ID > DIR/ID.lua, with DIR on \$GPUPLAN_CATALOG$}m,
     'says how to import it') or diag $e;

done_testing();
