# What a sixth new-user walk (a platform engineer's budget: pre-training,
# a multimodal QLoRA, GRPO, a serving fleet) found: an answer that was
# wrong, silent or unreadable.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);
my @train = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9');
my @plan = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9');

# 1. Every command prints a price as "2.14 USD/GPU-h"; that form, copied
# back into --price, was refused ("expected an amount per GPU-hour like
# '$2.49/h'").  Now read as $2.14/h: the same cost line as '$2.14/h'.
{
    my ($c1, $want) = run_gp(@train, '--price', '$2.14/h');
    is($c1, 0, "--price '\$2.14/h' runs");
    my ($cw) = $want =~ /^(time to train .*)$/m;
    for my $p ('2.14 USD/GPU-h', '2.14USD/GPU-h', '$2.14/GPU-h') {
        ($c, $o, $e) = run_gp(@train, '--price', $p);
        is($c, 0, "--price '$p' runs") or diag $e;
        my ($got) = $o =~ /^(time to train .*)$/m;
        is($got, $cw, "--price '$p': the cost line of \$2.14/h");
    }
    ($c, $o, $e) = run_gp(@train, '--price', '15CNY/GPU-h');
    like($o, qr/at 15\.00 CNY\/GPU-h$/m, "--price 15CNY/GPU-h: a CNY price") or diag $e;
}

# 2. --price 0x10 was read by Lua's tonumber as 16 USD a GPU-hour, while
# every other number option refuses a hexadecimal value.
# A price that does not parse is a usage error, exit 2: docs/output.md
# "A usage error is a command line that cannot be read as a question: ...
# a value the option cannot parse".
($c, $o, $e) = run_gp(@train, '--price', '0x10');
is($c, 2, '--price 0x10: refused, a usage error');
like($e, qr/^gpuplan: train: --price '0x10': bad price/m, '--price 0x10: names --price') or diag $e;

# 3. plan's --budget and --deadline refusals named no command ("gpuplan:
# --budget '0': ..."), unlike every other option's ("gpuplan: plan: ...").
# '0' and '-5' parse as amounts and are refused (exit 1, docs/output.md:
# "a value the job commands' declarations refuse"); '1y' is no duration,
# "a value the option cannot parse", a usage error (exit 2).
for my $a (['--budget', '0', 1], ['--budget', '-5', 1], ['--deadline', '1y', 2],
           ['--budget', 'xyz', 2]) {
    ($c, $o, $e) = run_gp(@plan, @$a[0, 1]);
    is($c, $a->[2], "plan @$a[0, 1]: exit $a->[2]");
    like($e, qr/^gpuplan: plan: $a->[0] '\Q$a->[1]\E': /m, "plan @$a[0, 1]: names plan") or diag $e;
}

# 4. --deadline 0d said "expected a duration like 30d, 12h or 2w": it is
# one, of the wrong size (a budget of 0 already says "must be positive").
($c, $o, $e) = run_gp(@plan, '--deadline', '0d');
like($e, qr/^gpuplan: plan: --deadline '0d': must be a positive duration$/m,
     '--deadline 0d: says it must be positive') or diag $e;

# 5. comm --max 4 alone said "need 1 <= --min <= --max", naming a --min
# the user never gave (the default 8B); --min 1GB --max 1MB did not say
# which values.  Each bound is now named with its value.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '4');
# out of range, not malformed: exit 1 (followups26; it exited 2)
is($c, 1, 'comm --max 4: out of range, exit 1');
like($e, qr/^gpuplan: comm: 8B \(the default --min\) is above --max 4: /m,
     'comm --max 4: names the default --min') or diag $e;
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '1GB', '--max', '1MB');
like($e, qr/^gpuplan: comm: --min 1GB is above --max 1MB: /m, 'comm --min 1GB --max 1MB: both values')
  or diag $e;

# 6. roofline --model --format csv headed its per-call time `time_s`
# while the values were microseconds (4.9 for a 4.9 us norm); the JSON's
# time_s is seconds.  The CSV's header now carries the unit it prints.
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama3-8b', '--format', 'csv');
is($c, 0, 'roofline csv runs') or diag $e;
like($o, qr/\Aphase,name,count,intensity,tflops,bound,time_us\n/, 'roofline csv: time_us');
{
    my ($c2, $j) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama3-8b', '--format', 'json');
    my $t = JSON::PP::decode_json($j)->{ops}[0]{time_s};
    my ($us) = $o =~ /^prefill,attn_norm,\d+,[^,]*,[^,]*,[^,]*,([^,\n]+)$/m;
    # the CSV prints the JSON's seconds x 1e6 to one decimal
    ok(abs($us - $t * 1e6) <= 0.05, "roofline csv time_us $us is the JSON's time_s x 1e6");
}

# 7. An unknown --optimizer, --recipe or --nic-fabric named neither the
# command nor the flag ("gpuplan: unknown optimizer 'x'" from plan and
# train), where --gpu and --system already said both.
for my $t (['train', '--optimizer', 'adamx', qr/^gpuplan: train: --optimizer: unknown optimizer 'adamx'/m],
           ['plan', '--optimizer', 'adamx', qr/^gpuplan: plan: --optimizer: unknown optimizer 'adamx'/m],
           ['train', '--recipe', 'mixed-17', qr/^gpuplan: train: --recipe: unknown recipe 'mixed-17'/m],
           ['train', '--nic-fabric', 'ib-x', qr/^gpuplan: train: --nic-fabric: unknown fabric 'ib-x'/m]) {
    my ($cmd, $flag, $v, $re) = @$t;
    ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', $flag, $v);
    if ($flag eq "--nic-fabric") { isnt($c, 0, "$cmd $flag $v: refused") }
    else { is($c, 2, "$cmd $flag $v: an unknown optimizer or recipe is a usage error, exit 2") }
    like($e, $re, "$cmd $flag $v: names the command and the flag") or diag $e;
}

# 8. A command line's refusals said "(got string 'dpo')": the Lua API's
# way to tell "5" from 5, noise where every value is a string.  A Lua
# script's call keeps it.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--algo', 'dpo');
like($e, qr/^gpuplan: rl: --algo must be grpo or ppo \(got 'dpo'\)$/m, "rl --algo dpo: (got 'dpo')")
  or diag $e;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--partition', 'balanced');
like($e, qr/\(got 'balanced'\)$/m, "fit --partition balanced: (got 'balanced')") or diag $e;

# 9. train/plan --method x listed grpo, ppo and infer among the values
# expected, each of which train and plan then refuse ("is not a training
# step").  Now the training methods alone.
for my $cmd ('train', 'plan') {
    ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'sft');
    like($e, qr/^gpuplan: $cmd: --method: unknown method 'sft' \(expected pretrain\|full\|lora\|qlora\)$/m,
         "$cmd --method sft: the training methods") or diag $e;
}

# 10. infer --runtime x listed the runtimes but not the value given, where
# every other choice's refusal says "(got 'x')".
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--runtime', 'vlm');
like($e, qr/^gpuplan: infer: --runtime must be graphs, .* or exllamav2 \(got 'vlm'\)$/m,
     'infer --runtime vlm: the value given') or diag $e;

# 11. model params with an unknown id said "gpuplan: unknown model 'x'",
# naming no command (every job command names itself).
($c, $o, $e) = run_gp('model', 'params', 'llama3_8b');
is($c, 1, 'model params llama3_8b: exit 1');
like($e, qr/^gpuplan: model params: unknown model 'llama3_8b' \(did you mean [^)]*llama3-8b/m,
     'model params llama3_8b: names the subcommand and the nearest id') or diag $e;

# 12. An --svg that cannot be written said "gpuplan: cannot write 'x/':
# it is a directory", naming neither the command nor the option.
{
    my $d = File::Temp::tempdir(CLEANUP => 1);
    for my $cmd (['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--sweep-batch'],
                 ['comm', '--system', 'dgx-h100'], ['roofline', '--gpu', 'h100-sxm']) {
        ($c, $o, $e) = run_gp(@$cmd, '--svg', "$d/");
        is($c, 1, "$cmd->[0] --svg DIR/: exit 1");
        like($e, qr/^gpuplan: $cmd->[0]: --svg: cannot write '\Q$d\E\/': it is a directory/m,
             "$cmd->[0] --svg DIR/: names the command and --svg") or diag $e;
    }
}

# 13. infer --disagg on too few GPUs said "--gpus 32 hold no prefill
# instance (32) and decode instance (32)", which reads as if no instance
# fit at all; it needs one of each side by side.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '32', '--ep', '32',
                      '--dp-attention', '--disagg');
is($c, 1, 'disagg on 32 GPUs of EP32: exit 1');
like($e, qr/^gpuplan: infer: --gpus 32 cannot hold a prefill instance of 32 GPUs beside a decode instance of 32: disaggregated serving needs at least 64$/m,
     'disagg on 32 GPUs: says it needs 64') or diag $e;

# 14. validate --explain of an rl mfu case wrote a script that printed
# nothing (its metric, verl's actor MFU, is a formula over the result,
# not a field), where validate --help says "gpuplan run runs it (it
# prints the prediction)".  Now it prints the case's predicted figure:
# the CSV's predicted column, to its 6 significant digits.
for my $id ('verl-0.5-grpo-deepseek-v3-h20-96-mfu', 'verl-dapo-qwen2.5-14b-h20-32-tp8pp2-mfu') {
    my ($c1, $script) = run_gp('validate', '--explain', $id);
    is($c1, 0, "explain $id") or next;
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    write_file("$dir/x.lua", $script);
    ($c, $o, $e) = run_gp('run', "$dir/x.lua");
    is($c, 0, "$id: the script runs") or diag $e;
    my ($c2, $csv) = run_gp('validate', '--format', 'csv');
    my ($pred) = $csv =~ /^\Q$id\E,rl,mfu,[^,]*,([^,]+),/m;
    ok(defined $pred && $o =~ /^([\d.]+)$/ && abs($1 - $pred) <= 5e-7 * 2 + 1e-6 * $pred,
       "$id: the script prints the predicted MFU ($pred)") or diag $o;
}

# 15. The guide's (and moe_serving's) --format html listed the formats
# but not the value given.
($c, $o, $e) = run_gp('--format', 'html');
like($e, qr/^gpuplan: guide: --format must be text, markdown, csv or json \(got 'html'\)$/m,
     "guide --format html: the value given") or diag $e;
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', '--format', 'html');
like($e, qr/^gpuplan: scripts\/moe_serving\.lua: --format must be .* \(got 'html'\)$/m,
     "moe_serving --format html: the value given") or diag $e;

# 16. catalog/FORMAT.md listed a model's params_b like its optional
# fields, while the loader refuses a model without it.  The doc now says
# "required"; this holds the doc to the loader.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    write_file("$dir/m.lua", qq{model { id = "nu6-m", name = "x", family = "llama", layers = 2, hidden = 256,
  heads = 4, ffn_hidden = 512, vocab = 1000, max_seq = 512, source = "test" }\n});
    ($c, $o, $e) = run_gp('catalog', 'check', $dir);
    like($e, qr/field 'params_b': required field is missing/, 'a model without params_b: refused')
      or diag $e;
    my $fmt = do { local (@ARGV, $/) = ('catalog/FORMAT.md'); <> };
    like($fmt, qr/^  params_b = [\d.]+, +-- required:/m, 'FORMAT.md says params_b is required');
}

done_testing();
