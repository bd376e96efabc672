# Hardening (issue 13): inputs that hung the tool, ate memory, overwrote a
# file through a link or leaked an internal error.  Each gives a one-line
# error naming the input (exit 1 or 2) or a correct answer.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
require './tests/cli/lib.pl';

my $tmp = tempdir(CLEANUP => 1);
my ($c, $o, $e);

# A refusal's message: stderr without the usage lines a usage error
# (exit 2) prints after it (the command's usage and where its help is).
sub message_of {
    my ($err, $code, $cmd) = @_;
    return $err unless $code == 2;
    $err =~ s/\nusage: gpuplan \Q$cmd\E .*\z/\n/s or return "no usage lines: $err";
    return $err;
}

# An error is one line naming the input, without gpuplan's own file:line
# or a traceback.
sub clean_error {
    my ($err, $name) = @_;
    my @lines = grep { /\S/ && !/^usage:/ } split /\n/, $err;
    my $first = $lines[0] // '';
    ok($first =~ /^gpuplan: / && $err !~ /stack traceback|lua\/gpuplan\/[\w\/]+\.lua:\d+/,
       "$name: one clean line") or diag $err;
}

# --- 1. A size sweep whose doubling overflowed never ended -------------
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '5000PB');
# Out of range, not malformed (5000PB reads as a size): exit 1, as every
# other out-of-range value exits (it exited 2, a usage error).
is($c, 1, 'comm --max 5000PB: out of range (exit 1), not a hang');
# the bytes read and the value as typed (5000PB = 5e18 B)
like($e, qr/^gpuplan: comm: --max must be a size of 1 B to 2\^50 B \(1 PiB\), got 5000000000000000000 \(--max 5000PB\)$/m,
     'comm --max 5000PB: the limit, the bytes and the value typed');
clean_error($e, 'comm --max 5000PB');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '4', '--max', '4611686018427387904');
is($c, 1, 'comm --max 2^62: out of range, exit 1');
like($e, qr/--max must be a size of 1 B to 2\^50 B/, 'comm --max 2^62: the limit');
# 1 PiB is past any card's memory (nccl-tests' send and receive buffers
# of the largest size: tests/cli/followups15.t): refused on a system,
# exit 1; a topology table names no card, and its sweep runs to the limit.
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '4', '--max', '1PiB', '--format', 'csv');
is($c, 1, 'comm to 1 PiB on dgx-h100: past the card\'s memory, exit 1');
like($e, qr/^gpuplan: comm: --max 1PiB: .* past h100-sxm's /m, '... naming --max') or diag $e;
write_file("$tmp/pib.lua", <<'LUA');
local rows = require("gpuplan.comm").sweep{ topology = { gpus_per_node = 8, up_kind = "nvlink",
  up_bw = 4.5e11 }, min = 4, max = 2^50 }
print(#rows)
LUA
($c, $o, $e) = run_gp('run', "$tmp/pib.lua");
is($c, 0, 'comm up to the limit, 1 PiB, answers') or diag $e;
# 4 B (one float, the least --min) .. 2^50 B doubling: 2^2 .. 2^50 is
# 49 sizes.
is($o, "49\n", '4 B .. 1 PiB is 49 rows');

# --- 2. Output files: never through a link, never over a non-file ------
my $d = "$tmp/d";
make_path($d);
write_file("$tmp/victim", "KEEP\n");
symlink("$tmp/victim", "$d/out.svg.tmp") or die "symlink: $!";
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$d/out.svg");
is($c, 0, 'roofline --svg beside a planted out.svg.tmp link writes the chart');
is(do { local (@ARGV, $/) = ("$tmp/victim"); <> }, "KEEP\n", 'the planted link\'s target is untouched');
ok(-f "$d/out.svg" && !-l "$d/out.svg", 'the chart is a regular file');
like(do { local (@ARGV, $/) = ("$d/out.svg"); <> }, qr/^<svg .*<\/svg>\n\z/s, 'and a whole SVG');
opendir(my $dh, $d); my @left = grep { !/^\.\.?$/ } readdir $dh; closedir $dh;
is_deeply([sort @left], ['out.svg', 'out.svg.tmp'], 'no temporary left in the directory');

symlink("$tmp/victim", "$d/link.svg") or die "symlink: $!";
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$d/link.svg");
is($c, 1, '--svg onto a symbolic link exits 1');
like($e, qr/^gpuplan: roofline: --svg: cannot write '\Q$d\E\/link.svg': it is a symbolic link/, 'and says it is a link');
is($o, '', 'nothing printed when the chart cannot be written');
ok(-l "$d/link.svg", 'the link is still a link');
is(do { local (@ARGV, $/) = ("$tmp/victim"); <> }, "KEEP\n", 'its target is untouched');

system('mkfifo', "$d/fifo") == 0 or die "mkfifo";
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$d/fifo");
is($c, 1, '--svg onto a FIFO exits 1, no hang');
like($e, qr/^gpuplan: roofline: --svg: cannot write '\Q$d\E\/fifo': it is a FIFO, not a regular file$/m, 'and names the FIFO');
ok(-p "$d/fifo", 'the FIFO is still a FIFO');
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', $d);
is($c, 1, '--svg onto a directory exits 1');
like($e, qr/^gpuplan: roofline: --svg: cannot write '\Q$d\E': it is a directory, not a regular file$/m, 'and names the directory');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1MiB', '--svg', "$d/link.svg");
is($c, 1, 'comm --svg onto a link exits 1');
is($o, '', 'comm prints no table when the chart cannot be written');
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--sweep-batch', '--svg', "$d/link.svg");
is($c, 1, 'infer --svg onto a link exits 1');
is($o, '', 'infer prints no table when the chart cannot be written');
write_file("$d/old.svg", "old\n");
chmod 0600, "$d/old.svg";
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1MiB', '--svg', "$d/old.svg");
is($c, 0, 'comm --svg over a regular file');
like(do { local (@ARGV, $/) = ("$d/old.svg"); <> }, qr/^<svg /, 'replaces it');
is((stat "$d/old.svg")[2] & 07777, 0600, 'keeping its mode');

# --- 3. Text tables render in time linear in their size ---------------
# A long name: the trailing-blank trim of each row retried at every blank
# of the padding, 20 s for 10,000 characters.  A catalog string is at most
# 4096 bytes (issue 19.6), the longest a catalog name can be; the case id
# below, which has no such limit, is 80,000 characters.
my $cat = "$tmp/longname";
make_path($cat);
my $long = 'x' x 4096;
write_file("$cat/a.lua", qq{gpu { id = "longname", name = "$long", vendor = "v", arch = "hopper",
  memory = "80GB", mem_bw = "3TB/s", peak = { bf16 = "900TFLOPS" }, source = "s" }\n});
{
    local $ENV{GPUPLAN_CATALOG} = $cat;
    ($c, $o, $e) = run_gp('catalog', 'list', 'gpus');
}
is($c, 0, 'catalog list with a 4096-character name');
my ($row) = grep { /^longname / } split /\n/, $o;
like($row // "", qr/^longname\s+\Q$long\E\s+80GB/, "the name is printed whole");
ok(!grep({ / +$/ } split /\n/, $o), 'no line ends in blanks');
my $cases = "$tmp/longid.json";
my $id = 'c' x 80000;
write_file($cases, qq{[{"id": "$id", "kind": "memory",
  "model": {"name": "m", "layers": 2, "hidden": 64, "heads": 2, "vocab": 100, "ffn_hidden": 256},
  "hardware": {"gpu": "h100-sxm", "gpus": 1},
  "workload": {"method": "full", "seq_len": 128},
  "measured": {"metric": "peak_memory_gib", "value": 1.5, "unit": "GiB"}}]\n});
($c, $o, $e) = run_gp('validate', $cases);
is($c, 0, 'validate a case with an 80,000-character id');
like($o, qr/^\Q$id\E +memory /m, "the id is printed whole");

# --- 4. Limits apply before reading and compiling --------------------
# Sparse files: their size is what matters, no disk is used.
sub sparse {
    my ($path, $head, $size, $tail) = @_;
    open(my $fh, '>', $path) or die "$path: $!";
    print $fh $head;
    seek($fh, $size - length($tail), 0);
    print $fh $tail;
    close $fh;
}
my $big = "$tmp/big";
make_path($big);
sparse("$big/huge.lua", "-- ", 3 * 1024 ** 3, "\n");
($c, $o, $e) = run_gp('catalog', 'check', $big);
is($c, 1, 'a 3 GB catalog file: exit 1');
like($e, qr/^\Q$big\E\/huge.lua: too large \(3072 MiB; the limit for a catalog file is 4 MiB\)$/m,
     'refused by its size, before any read');
unlink "$big/huge.lua";
sparse("$big/literal.lua", "local s = '", 200 * 1000 ** 2, "'\n");
($c, $o, $e) = run_gp('catalog', 'check', $big);
is($c, 1, 'a 200 MB string literal: exit 1');
like($e, qr/literal.lua: too large \(190.7 MiB;/, 'refused by its size');
unlink "$big/literal.lua";
write_file("$big/deep.lua", 'local x = ' . ('(' x 100000) . '1' . (')' x 100000) . "\n");
($c, $o, $e) = run_gp('catalog', 'check', $big);
is($c, 1, '100,000 nested parentheses: exit 1');
like($e, qr/^\Q$big\E\/deep.lua: nested too deeply to compile \(C stack overflow\)$/m, 'one line naming the file');
unlike($e, qr/stack traceback|catalog\.lua:\d+/, 'no traceback of internals');
($c, $o, $e) = run_gp('validate', $big);
is($c, 1, 'validate of a directory: exit 1');
like($e, qr/^gpuplan: cannot read case file '\Q$big\E': is a directory$/m, 'names it');
unlink "$big/deep.lua";
sparse("$big/cases.json", "[", 65 * 1024 ** 2, "]");
($c, $o, $e) = run_gp('validate', "$big/cases.json");
is($c, 1, 'a 65 MiB case file: exit 1');
like($e, qr/^gpuplan: \Q$big\E\/cases.json: too large \(65 MiB; the limit for a case file is 64 MiB\)$/m,
     'refused by its size');
sparse("$big/config.json", "{", 17 * 1024 ** 2, "}");
($c, $o, $e) = run_gp('model', 'import', "$big/config.json");
is($c, 1, 'a 17 MiB config.json: exit 1');
like($e, qr/^gpuplan: \Q$big\E\/config.json: too large \(17 MiB; the limit for a config file is 16 MiB\)$/m,
     'refused by its size');

# A script nested as deeply: one line naming it, not the CLI's traceback.
write_file("$tmp/deep.lua", 'local x = ' . ('(' x 100000) . '1' . (')' x 100000) . "\n");
($c, $o, $e) = run_gp('run', "$tmp/deep.lua");
is($c, 1, 'a script of 100,000 nested parentheses: exit 1');
is($e, "gpuplan: $tmp/deep.lua: C stack overflow\n", 'one line naming the script');

# --- 5. catalog check runs the commands' checks ----------------------
my $F = 'tests/fixtures/catalog';
($c, $o, $e) = run_gp('catalog', 'check', "$F/good", "$F/semantic");
is($c, 1, 'catalog check of entries the commands refuse: exit 1');
my @sem = grep { /^\Q$F\E\/semantic\/entries.lua:\d+: / } split /\n/, $e;
open(my $xf, '<', "$F/semantic/expected.txt") or die;
my @want = <$xf>;
close $xf;
is(scalar @sem, scalar @want, 'every bad entry of the file reported: ' . scalar @want);
is($o, '', 'and no "ok"');

# A broken file on the search path: every command names it.
my $broken = "$tmp/broken";
make_path($broken);
write_file("$broken/a.lua", "gpu { id = \"x\" }\nlimit = 1\n");
{
    local $ENV{GPUPLAN_CATALOG} = $broken;
    for my $cmd (['fit', 'llama2-7b', '--gpu', 'h100-sxm'], ['infer', 'llama2-7b', '--gpu', 'h100-sxm'],
                 ['roofline', '--gpu', 'h100-sxm'], ['comm', '--system', 'dgx-h100'],
                 ['model', 'params', 'llama2-7b'], ['catalog', 'list'],
                 ['validate', 'tests/fixtures/validation/mini.json'],
                 ['run', 'scripts/guide.lua'], []) {
        ($c, $o, $e) = run_gp(@$cmd);
        my $name = join(' ', @$cmd) || '(the guide)';
        is($c, 1, "$name with a broken catalog: exit 1");
        like($e, qr/^gpuplan: (comm: --system: )?\Q$broken\E\/a.lua:1: gpu 'x': field 'arch': required field is missing \(so are [^)]*\) \(and 1 more error/m,
             "$name names the file and line");
        clean_error($e, $name);
    }
    ($c, $o, $e) = run_gp('catalog', 'check', $broken);
    like($e, qr/^\Q$broken\E\/a.lua:2: assignment to global 'limit'/m, 'check lists the second error with its line');
    # A runaway loop, the "runs too long" that fit printed without a file.
    write_file("$broken/a.lua", "gpu { id = \"x\" }\nwhile true do end\n");
    ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm');
    like($e, qr/^gpuplan: \Q$broken\E\/a.lua:1: .*\(and 1 more error/m, 'fit with a looping catalog file names it');
    ($c, $o, $e) = run_gp('catalog', 'check', $broken);
    like($e, qr/^\Q$broken\E\/a.lua:2: catalog file runs too long/m, 'and check names the loop\'s line');
}

# Skipped, not silent: a broken link and a link loop on the search path.
my $links = "$tmp/links";
make_path($links);
symlink("$links/gone.lua", "$links/broken.lua") or die;
symlink("$links/b.lua", "$links/a.lua") or die;
symlink("$links/a.lua", "$links/b.lua") or die;
{
    local $ENV{GPUPLAN_CATALOG} = $links;
    ($c, $o, $e) = run_gp('catalog', 'list', 'archs');
}
is($c, 0, 'broken links on the search path: the command still runs');
like($e, qr/^gpuplan: warning: \Q$links\E\/broken.lua: broken symbolic link \(to \Q$links\E\/gone.lua\), skipped$/m,
     'a broken link is a warning');
like($e, qr/^gpuplan: warning: \Q$links\E\/a.lua: symbolic link loop/m, 'a loop is a warning');
($c, $o, $e) = run_gp('catalog', 'check', $links);
is($c, 0, 'catalog check of a directory of broken links: no error');
like($e, qr/^gpuplan: warning: \Q$links\E\/broken.lua: broken symbolic link/m, 'but the warnings');
is($o, "ok: 0 entries in $links\n", 'and no entry from it');

# --- 8. A script's misuse names the script's line ---------------------
write_file("$tmp/misuse.lua", <<'LUA');
local gp = require "gpuplan"
local r = gp.memory { model = "llama2-7b", gpu = "h100-sxm",
  gpus = "eight" }
LUA
($c, $o, $e) = run_gp('run', "$tmp/misuse.lua");
is($c, 1, 'a script\'s misuse exits 1');
is($e, "gpuplan: $tmp/misuse.lua:2: memory: gpus must be a whole number 1..16777216 (got string 'eight')\n",
   'one line naming the script\'s line, no traceback');
write_file("$tmp/sweep.lua", "require('gpuplan.comm').sweep{op = 'all_reduce', system = 'dgx-h100', min = 8, max = 64, factor = 1}\n");
($c, $o, $e) = run_gp('run', "$tmp/sweep.lua");
is($c, 1, 'comm.sweep with factor 1: exit 1, no hang');
is($e, "gpuplan: $tmp/sweep.lua:1: comm: factor must be a finite number > 1 (got 1)\n", 'names the script line');
# A script's own bug keeps its traceback (it is the script's, not ours).
write_file("$tmp/bug.lua", "local t = nil\nprint(t.x)\n");
($c, $o, $e) = run_gp('run', "$tmp/bug.lua");
like($e, qr/^gpuplan: \Q$tmp\E\/bug.lua:2: attempt to index a nil value/, 'a script bug names its line');
like($e, qr/stack traceback/, 'and keeps the traceback');

# Absurd values are errors, not answers.
for my $t (
    [['fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'infer', '--weights', '1e-300'],
     qr/^gpuplan: fit: --weights: 1e-300 bits per weight is out of \[1, 32\]$/m],
    [['fit', 'llama2-7b', '--gpu', 'h100-sxm', '--seq', '1000000000000000'],
     qr/^gpuplan: fit: --seq must be a whole number of tokens, 1\.\.16777216 \(got 1000000000000000\)$/m],
    [['fit', 'llama2-7b', '--gpu', 'h100-sxm', '--vpp', '2'],
     qr/^gpuplan: fit: --vpp 2 needs a pipeline \(--pp > 1; got --pp 1\)$/m],
    [['fit', 'llama2-7b', '--gpu', 'h100-sxm', '--capacity-factor', '1.5'],
     qr/^gpuplan: fit: --capacity-factor applies to MoE models; llama2-7b has no experts$/m],
    [['infer', 'llama2-7b', '--gpu', 'h100-sxm', '--price', '12XYZ/h'],
     qr/^gpuplan: infer: --price: unknown currency 'XYZ' \(the catalog has CNY, USD\)$/m],
    [['infer', 'llama2-7b', '--gpu', 'h100-sxm', '--input', '100000000'],
     qr/^gpuplan: infer: --input must be a whole number of tokens, 1\.\.16777216 \(got 100000000\)$/m],
    # Issue 20.6: the flag the user typed, not the Lua key (host_bw).
    [['train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--host-bw', '50'],
     qr/^gpuplan: train: --host-bw '50' needs a unit, e.g\. 200GB\/s$/m],
    # pack_tokens names its flag and its whole range (it said "pack_tokens
    # must be ..., 0 or more (got 1e+30)").
    [['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--pack-tokens', '-1'],
     qr/^gpuplan: rl: --pack-tokens must be a whole number of tokens, 0\.\.16777216 \(got -1\)$/m],
    [['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--token-batch', '-1'],
     qr/^gpuplan: rl: --token-batch must be a whole number of tokens, 0\.\.16777216 \(got -1\)$/m],
    # Megatron-Core's uneven pipeline split: the rest must divide over
    # the other stages (32 - 4 = 28 over 3), named by the flag.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '4', '--tp', '2',
      '--stack', 'megatron', '--last-stage-layers', '4'],
     qr/^gpuplan: train: --last-stage-layers 4 leaves 28 of the model's 32 layers for 3 other stages: they must divide evenly, one layer each at least$/m],
    # More layers at the ends than the model has: it names what was typed.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '4', '--tp', '2',
      '--stack', 'megatron', '--first-stage-layers', '20', '--last-stage-layers', '20'],
     qr/^gpuplan: train: --first-stage-layers 20 and --last-stage-layers 20: more than the model's 32 layers$/m],
    # The split is Megatron-Core's: the default hf stack partitions by its
    # own rule, and the message says which stack takes the option.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '4', '--tp', '2',
      '--last-stage-layers', '5'],
     qr/^gpuplan: train: --last-stage-layers is Megatron-Core's split \(num_layers_in_last_pipeline_stage\); --stack hf partitions by its own rule \(the megatron stack takes it\)$/m],
    # DualPipe pairs stages on a rank: the ends' counts are priced per
    # chunk (memory_train.c stage_dual), split_ends' slots are not; another
    # partition rule would be overridden by the ends' counts: refused, not
    # ignored.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '4', '--tp', '2',
      '--stack', 'megatron', '--split-ends', '--schedule', 'dualpipe'],
     qr/^gpuplan: train: --split-ends: priced for 1F1B and the interleaved schedule, not DualPipe's paired stages$/m],
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '4', '--tp', '2',
      '--stack', 'megatron', '--last-stage-layers', '5', '--partition', 'parameters'],
     qr/^gpuplan: train: --last-stage-layers 5: the uneven split replaces the partition rule \(--partition parameters\); give one or the other$/m],
    # Two stages: the ends are every stage, so they hold all 32 layers.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '2', '--tp', '4',
      '--stack', 'megatron', '--first-stage-layers', '10', '--last-stage-layers', '10'],
     qr/^gpuplan: train: --first-stage-layers 10 and --last-stage-layers 10: with --pp 2 the two ends are every stage, so they hold all 32 layers$/m],
    # RL trains the policy's LLM: freezing it is refused, not ignored.
    [['fit', 'llava-1.5-7b', '--gpu', 'a100-sxm-80gb', '--method', 'grpo', '--no-train-llm'],
     qr/^gpuplan: fit: --no-train-llm: --method grpo trains the policy's language model$/m],
    # The advantage loop is PPO's: GRPO has no critic to estimate with.
    [['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--gae-ops', '5'],
     qr/^gpuplan: rl: --gae-ops is PPO's advantage estimate \(GAE over the critic's values\); --algo grpo has no value function$/m],
    [['infer', 'llama2-7b', '--gpu', 'h100-sxm', '--host-memory', '5xx'],
     qr/^gpuplan: infer: --host-memory: bad bytes '5xx': unknown unit 'xx'/m],
    # DP attention in the rollout engine splits its sequences beside its
    # experts: without the experts over its GPUs it is refused by flag.
    [['rl', 'qwen3-30b-a3b', '--gpu', 'h200-sxm', '--gpus', '8', '--ep', '8', '--rollout-tp', '8',
      '--rollout-dp-attention'],
     qr/^gpuplan: rl: --rollout-dp-attention needs --rollout-ep = --rollout-tp > 1 \(the experts over the engine's GPUs\)$/m],
    # A base checkpoint's mean is assumed from the limit: with the mean
    # given, or no limit to take a share of, it is refused, not ignored.
    [['rl', 'qwen3-30b-a3b', '--gpu', 'h20', '--gpus', '8', '--response-len', '900',
      '--response-max', '8192', '--base-checkpoint'],
     qr/^gpuplan: rl: --base-checkpoint assumes the mean response, --response-len 900 states it: give one of them$/m],
    [['rl', 'qwen3-30b-a3b', '--gpu', 'h20', '--gpus', '8', '--base-checkpoint'],
     qr/^gpuplan: rl: --base-checkpoint needs --response-max: the mean is assumed as a share of the limit$/m],
    # A training offload the engine does not know is refused by its flag
    # (it named the engine's field: "train: train.offload must be ...").
    # train opens with its name as rl does (gpuplan.memory's refusals
    # said none under gp.train, where train's own say "train:").
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '2', '--offload', 'nvme'],
     qr/^gpuplan: train: --offload must be none, optimizer or params\+optimizer \(got 'nvme'\)$/m],
    [['rl', 'qwen3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '2', '--offload', 'nvme'],
     qr/^gpuplan: rl: --offload must be none, optimizer or params\+optimizer \(got 'nvme'\)$/m],
    [['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'full', '--zero', '2', '--offload', 'nvme'],
     qr/^gpuplan: fit: --offload must be none, optimizer or params\+optimizer \(got 'nvme'\)$/m],
    # The rollout engine's size, named by the flags that set it (it read
    # "tp x --pp 3", the training pipeline's flag; then --rollout-pp,
    # not given either).
    [['rl', 'qwen3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--rollout-tp', '3'],
     qr/^gpuplan: rl: the rollout engine's 3 GPUs \(--rollout-tp 3\) do not divide --gpus 8 \(the colocated pools\)$/m],
    # plan's lists are checked by their flag and place, not by the engine's
    # binding ("sweep: sweep.zero: values are 0..3 (got 5)") nor by the
    # Lua key and index gp.sweep names ("sweep: zero[2] must be ..."), and
    # under the command's name.
    [['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1,5'],
     qr/^gpuplan: plan: value 2 of --zero must be 0, 1, 2 or 3 \(got 5\)$/m],
    [['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--recompute', 'full,bogus'],
     qr/^gpuplan: plan: value 2 of --recompute must be none, selective, full or op \(got 'bogus'\)$/m],
    [['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--etp', 'tp,2'],
     qr/^gpuplan: plan: value 2 of --etp must be "tp" or 1 \(got '2'\)$/m],
    # Megatron-Core's unfused loss on eager modules would change nothing:
    # refused by flag, not ignored.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--kernels', 'eager',
      '--unfused-loss'],
     qr/^gpuplan: train: --unfused-loss is Megatron-Core's vocab-parallel cross-entropy; with --kernels eager \(--stack hf\) the loss is already Hugging Face's, op by op: give --kernels fused$/m],
    # Megatron-Core's unfused activation on eager modules, and a router
    # dtype without it, would change nothing: refused by flag.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--kernels', 'eager',
      '--unfused-act'],
     qr/^gpuplan: train: --unfused-act is Megatron-Core's MLP without bias_activation_fusion; with --kernels eager \(--stack hf\) the activation is already Hugging Face's, op by op: give --kernels fused$/m],
    [['train', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep', '8', '--stack',
      'megatron', '--moe-router-dtype', 'fp32'],
     qr/^gpuplan: train: --moe-router-dtype fp32 prices the probabilities' product in the experts' unfused activation: it needs --unfused-act and --moe-probs activation \(the fused kernel casts in registers; the router's GEMM stays Transformer Engine's\)$/m],
    # vLLM's fused routing kernels on a model without their router would
    # change nothing: refused by flag, not ignored.
    [['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--rollout-fused-grouped-topk'],
     qr/^gpuplan: rl: --rollout-fused-grouped-topk given for a model without a grouped-top-k MoE router \(the MLA models' MoE layers, DeepSeek's\)$/m],
    ) {
    ($c, $o, $e) = run_gp(@{$t->[0]});
    my $name = join ' ', @{$t->[0]}[0, -2, -1];
    ok($c == 1 || $c == 2, "$name: an error") or diag "exit $c: $o";
    like($e, $t->[1], "$name: the value and its range");
    is($o, '', "$name: no answer printed");
}
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--price', '12CNY/h');
like($o, qr/^cost per 1M output tokens\s+[\d.]+ CNY \([\d.]+-[\d.]+\)$/m, 'a known currency still prices');

# --- 6. model import: every bad field named with its value and range ---
my $cfg = "$tmp/config.json";
for my $t (['"hidden_size": 4096', '"hidden_size": 1e300', 'hidden_size must be an integer in 1..16777216 (got 1e+300)'],
           ['"num_key_value_heads": 8', '"num_key_value_heads": 1e300', 'num_key_value_heads must be an integer in 1..16777216 (got 1e+300)'],
           ['"hidden_size": 4096', '"hidden_size": Infinity', 'hidden_size must be an integer in 1..16777216 (got Infinity)'],
           ['"num_hidden_layers": 32', '"num_hidden_layers": 18446744073709551616', 'num_hidden_layers must be an integer in 1..16777216 (got 1.844674407371e+19)'],
           ['"intermediate_size": 14336,', '', "missing field 'intermediate_size'"]) {
    my $text = do { local (@ARGV, $/) = ('tests/fixtures/hf/llama-3.1-8b.json'); <> };
    $text =~ s/\Q$t->[0]\E/$t->[1]/ or die "no $t->[0]";
    write_file($cfg, $text);
    ($c, $o, $e) = run_gp('model', 'import', $cfg, '--id', 'x');
    is($c, 1, "import with $t->[1]: exit 1");
    # the field's line where the file spells it (a missing field: none)
    my $field = $t->[2] =~ /^(\w+) must/ ? $1 : undef;
    my ($ln) = $field ? grep { (split /\n/, $text)[$_ - 1] =~ /"\Q$field\E"\s*:/ } 1 .. scalar(split /\n/, $text) : ();
    my $at = $ln ? "$cfg:$ln" : $cfg;
    is($e, "gpuplan: $at: $t->[2]\n", "import with $t->[1]: names the field, its line, value and range");
}

# --- 7. validate: a malformed case is an error naming case and field ----
write_file("$tmp/nullcase.json", '[null, {"id": "a", "kind": "memory", "measured": {"metric": "peak_memory_gib", "value": 1}}]');
($c, $o, $e) = run_gp('validate', "$tmp/nullcase.json");
is($c, 1, '[null, case]: exit 1, not 0 cases');
is($e, "gpuplan: $tmp/nullcase.json:1: case 1: expected a case object, got null\n", 'names the null case');
write_file("$tmp/badfield.json", '[{"id": "a", "kind": "memory", "model": {"layers": "many"}, "measured": {"metric": "peak_memory_gib", "value": 1}}]');
($c, $o, $e) = run_gp('validate', "$tmp/badfield.json");
is($c, 1, 'a malformed field: exit 1');
is($e, "gpuplan: $tmp/badfield.json:1: case 'a': field 'model.layers': expected a finite number, got \"many\"\n",
   'names the case and the field');
write_file("$tmp/tiny.json", '[{"id": "a", "kind": "memory", "measured": {"metric": "peak_memory_gib", "value": 1e-320}}]');
($c, $o, $e) = run_gp('validate', "$tmp/tiny.json");
is($c, 1, 'a measured value of 1e-320: exit 1, not a median of inf');
like($e, qr/^gpuplan: \Q$tmp\E\/tiny.json:1: case 'a': field 'measured.value': must be >= 1e-06, got /, 'names the value and its range');

# --- 9. hidden near 2^31 (UBSan: signed overflow of 2 * hidden) -------
my $hcat = "$tmp/hidden";
make_path($hcat);
write_file("$hcat/m.lua", 'model { id = "wide", name = "x", layers = 2, hidden = 2147483647, heads = 1, ffn_hidden = 128, vocab = 100, params_b = 1, norm = "layer", source = "t" }' . "\n");
{
    local $ENV{GPUPLAN_CATALOG} = $hcat;
    ($c, $o, $e) = run_gp('model', 'params', 'wide');
}
is($c, 1, 'a model of hidden 2^31 - 1: exit 1');
like($e, qr/^gpuplan: \Q$hcat\E\/m.lua:1: model 'wide': field 'hidden': must be <= 16777216, got 2147483647/m,
     'the catalog names the field, no cmd/model.lua position');
clean_error($e, 'model params wide');

# --- 10. Issue 19.1: the executable's modules load only from its own tree.
# A gpuplan/cmd/*.lua, a gpuplan.lua or an lfs.lua in the directory where
# gpuplan starts must never run: not on --help, not on a command, not on
# the guide.  A script run with `gpuplan run` may require files beside it.
{
    use Cwd qw(abs_path getcwd);
    my $bin = abs_path($main::GP);
    my $here = getcwd();
    my $pwn = "$tmp/pwn";
    make_path("$pwn/gpuplan/cmd");
    for my $f ('gpuplan/cmd/sweep.lua', 'gpuplan/cmd/plan.lua', 'gpuplan/cmd/nosuch.lua',
               'gpuplan/init.lua', 'gpuplan.lua', 'gpuplan/cli.lua', 'lfs.lua', 'cjson.lua') {
        (my $tag = $f) =~ s/\W/_/g;
        write_file("$pwn/$f", "io.open('PWN_$tag', 'w'):write(1)\n");
    }
    write_file("$pwn/helper.lua", "return { answer = 42 }\n");
    write_file("$pwn/script.lua", "local h = require 'helper'\nlocal gp = require 'gpuplan'\n"
        . "print(h.answer, type(gp.train))\n");
    chdir $pwn or die "chdir: $!";
    local $main::GP = $bin;
    ($c, $o, $e) = run_gp('--help');
    is($c, 0, 'gpuplan --help in a directory with planted modules');
    unlike($o, qr/^\s+sweep\s/m, 'no command listed without its module (sweep)');
    ($c, $o, $e) = run_gp('sweep');
    is($c, 2, 'gpuplan sweep: an unknown command, the planted file is not run');
    ($c, $o, $e) = run_gp('nosuch');
    is($c, 2, 'gpuplan nosuch: unknown command');
    ($c, $o, $e) = run_gp('plan', '--help');
    is($c, 0, 'gpuplan plan --help runs the real plan');
    like($o, qr/^usage: gpuplan plan/, 'its own usage');
    ($c, $o, $e) = run_gp('run', 'script.lua');
    is($c, 0, 'a script requires a file beside itself') or diag $e;
    is($o, "42\tfunction\n", 'its helper and the real gpuplan module');
    opendir(my $dh, $pwn); my @pwned = grep { /^PWN/ } readdir $dh; closedir $dh;
    is_deeply(\@pwned, [], 'no planted module ran') or diag "@pwned";
    chdir $here or die "chdir: $!";
}
# Every command --help lists has its module (gpuplan CMD --help answers).
($c, $o, $e) = run_gp('--help');
my @cmds = $o =~ /^  (\w+)\s/mg;
ok(@cmds >= 10, 'gpuplan --help lists the commands');
for my $cmd (@cmds) {
    my ($cc, $co) = run_gp($cmd, '--help');
    is($cc, 0, "gpuplan $cmd --help: the listed command has its module");
}

# --- 11. Issue 19.2 and 19.7: shard counts are bounded on both sides, and
# merge writes the documented --format json.
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--shard', '1/16777216',
                      '--format', 'json');
isnt($c, 0, 'plan --shard 1/16777216 is refused');
like($e, qr/shard '1\/16777216': at most 65536 shards/, 'naming the shard and the limit');
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--shard', '1/65536',
                      '--format', 'json');
is($c, 0, 'plan --shard 1/65536, the limit, answers');
write_file("$tmp/big1.json", $o);
($c, $o, $e) = run_gp('merge', "$tmp/big1.json");
is($c, 1, 'merge of one shard of 65536: an error, at once');
is($e, "gpuplan: merge: shards 2/65536, 3/65536, 4/65536, 5/65536, 6/65536, 7/65536, 8/65536, "
     . "9/65536 and 65527 more are missing\n",
   'the first eight missing named, the rest counted (65536 - 1 given - 8 named = 65527)');
(my $forged = do { local (@ARGV, $/) = ("$tmp/big1.json"); <> }) =~ s{"shard":"1/65536"}{"shard":"1/1000000000"}g;
write_file("$tmp/forged.json", $forged);
($c, $o, $e) = run_gp('merge', "$tmp/forged.json");
is($c, 1, 'a shard line claiming 1/1e9: refused');
like($e, qr/shard 1\/1000000000: at most 65536 shards/, 'with the limit');
($forged = $forged) =~ s{"shard":"1/1000000000"}{"shard":"5/4"}g;
write_file("$tmp/forged.json", $forged);
($c, $o, $e) = run_gp('merge', "$tmp/forged.json");
is($c, 1, 'a 5/4 shard: refused');
like($e, qr/shard '5\/4' is not K\/N with 1 <= K <= N/, 'K above N named');
for my $k (1, 2) {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--shard', "$k/2",
                          '--format', 'json');
    write_file("$tmp/half$k.json", $o);
}
($c, $o, $e) = run_gp('merge', "$tmp/half1.json", "$tmp/half2.json", '--format', 'json');
is($c, 0, 'merge --format json, as its help documents') or diag $e;
like($o, qr/^\{.*"kind":"plan".*\}\n(\{.*"kind":"result".*\}\n)+\z/, 'the merged JSON lines: a plan line, results');
($c, $o, $e) = run_gp('merge', "$tmp/half1.json", "$tmp/half1.json", "$tmp/half2.json");
is($c, 1, 'three files for two shards: refused');

# --- 12. Issue 19.3 and 19.4: each split's bound is clamped to what the
# model, node and GPU counts allow before anything is enumerated, and the
# grid's size never wraps.  llama3-8b on h100-sxm (8 per node), 25 counts
# 1..2^24, every --*-max 10^6 (before: 292 s, "space" a wrapped long):
# tp min(8 node, 32 heads) = 8, pp 32 layers, cp seq 8192 / 2 = 4096,
# ep 1 (dense: --ep-max above 1 is refused for it, so not given), vpp 32
# layers / 2 = 16, micro-batch 3 x recompute 3:
# 25 x 8 x 32 x 4096 x 16 x 9 = 3,774,873,600 combinations.  The time
# limit is generous for a loaded host; the search takes ~0.2 s.
{
    use Time::HiRes qw(time);
    my $t0 = time;
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '1..16777216',
                          (map { ("--$_-max", '1000000') } qw(tp pp cp vpp)), '--format', 'json');
    my $dt = time - $t0;
    is($c, 0, 'plan with every --*-max at 10^6 answers') or diag $e;
    ok($dt < 10, "... in seconds, not minutes (took ${dt} s)");
    like($o, qr/"space":3774873600[,}]/, 'the grid counted after the clamp: 25 x 8 x 32 x 4096 x 16 x 9');
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '1..16777216',
                          '--vpp-max', '1000000', '--format', 'json');
    is($c, 0, 'plan --gpus 1..16777216 --vpp-max 1000000');
    like($o, qr/"space":230400[,}]/, 'vpp clamped to 16: 25 x 8 x 8 x 16 x 9 = 230400');
}

# --- 13. Issue 19.6: the whole catalog has a budget, not only each file.
# A GPU entry the commands accept, with its name given as Lua source.
sub gpu_entry {
    my ($id, $name) = @_;
    return "gpu { id = '$id', name = $name, vendor = 'T', arch = 'hopper', memory = GiB(48), "
         . "mem_bw = '1TB/s', peak = { bf16 = '100TFLOPS' }, source = 't' }\n";
}
# Forty files, each naming its GPU with a 4 MB string (2^22 bytes by 22
# doublings): 168 MB held for every command before.  A catalog string is
# at most 4096 bytes: each file is refused naming its line and the limit.
# 4 MB, not 16: building forty 16 MB strings takes about 5 s of CPU under
# the sanitizers, the budget of the whole search path, so the fortieth
# file met that budget before its own check on a slower host.
my $names = "$tmp/names";
make_path($names);
write_file(sprintf("$names/f%02d.lua", $_), "local s = 'x' for _ = 1, 22 do s = s .. s end\n"
           . gpu_entry("g$_", 's')) for 1 .. 40;
($c, $o, $e) = run_gp('catalog', 'check', $names);
is($c, 1, '40 files of 4 MB names: exit 1');
my @long = $e =~ /^\Q$names\E\/f\d\d.lua:2: gpu 'g\d+': field 'name': longer than 4096 bytes \(got 4194304\)$/mg;
is(scalar @long, 40, 'each file named with its line, the field and the limit');
{
    local $ENV{GPUPLAN_CATALOG} = $names;
    ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm');
    is($c, 1, 'fit on that search path: exit 1');
    like($e, qr/^gpuplan: \Q$names\E\/f01.lua:2: gpu 'g1': field 'name': longer than 4096 bytes/m,
         'fit names the first file');
    clean_error($e, 'fit with 40 files of 4 MB names');
}
# Three hundred files that each loop 3,300,000 times: ~7.7 million counted
# instructions a file (two an iteration and the count hook's own, ~14 a
# check of every 100), under the 10 million of one file, 18 s for every
# command before.  With the built-in catalog's ~0.41 million, the files
# together reach the budget of 20 million in the third (0.41 + 3 x 7.7 =
# 23.5 > 20 > 0.41 + 2 x 7.7 = 15.8).
my $loops = "$tmp/loops";
make_path($loops);
write_file(sprintf("$loops/f%03d.lua", $_), "local n = 0 for i = 1, 3300000 do n = n + 1 end\n")
    for 1 .. 300;
my $budget = qr/the catalog files together run more than 20000000 instructions or 5 s, the budget for all the files of the search path; no later file is read/;
{
    local $ENV{GPUPLAN_CATALOG} = $loops;
    ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm');
    is($c, 1, '300 looping files: exit 1');
    like($e, qr/^gpuplan: \Q$loops\E\/f003.lua:1: $budget$/m, 'the file that crossed the budget, and the budget');
    clean_error($e, 'fit with 300 looping files');
}
($c, $o, $e) = run_gp('catalog', 'check', $loops);
is($e, "$loops/f003.lua:1: the catalog files together run more than 20000000 instructions or 5 s, "
     . "the budget for all the files of the search path; no later file is read\n"
     . "gpuplan: 1 error in $loops\n", 'catalog check: one error, no file after the third is run');

# --- 14. Issue 19.12 and 19.13: control characters, and what a catalog
# file that recurses or exhausts memory is told.
my $esc = "$tmp/esc";
make_path($esc);
write_file("$esc/a.lua", gpu_entry('esc-gpu', "'A\\27[31mB'"));
{
    local $ENV{GPUPLAN_CATALOG} = $esc;
    ($c, $o, $e) = run_gp('roofline', '--gpu', 'esc-gpu', '--svg', "$tmp/esc.svg");
    is($c, 1, 'an ESC in a catalog name: roofline --svg exits 1');
    like($e, qr/^gpuplan: \Q$esc\E\/a.lua:1: gpu 'esc-gpu': field 'name': control character "\\27" at byte 2 \(text only\)$/m,
         'refused at the catalog with file:line and the character');
    ok(!-e "$tmp/esc.svg", 'no SVG written');
}
mkdir "$tmp/mi";
write_file("$tmp/mi/config.json", '{"model_type": "x\u001b[31m\u0000\nq", "hidden_act": "silu", '
    . '"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128, '
    . '"vocab_size": 100}');
($c, $o, $e) = run_gp('model', 'import', "$tmp/mi/config.json", '--id', 'ctl');
is($c, 1, 'model import of a model_type with ESC, NUL and a newline: exit 1');
is($e, "gpuplan: $tmp/mi/config.json:1: model_type 'x\\027[31m\\000\\nq' has a control character "
     . "at byte 2 (text only)\n", 'one line, the characters escaped');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', "--x\e[1m");
is($c, 2, 'an option name with ESC: a usage error');
like($e, qr/^gpuplan: fit: bad option '--x\\027\[1m'$/m, 'the option escaped');
($c, $o, $e) = run_gp('validate', "$tmp/no\e[31m\nsuch.json");
is($c, 1, 'a path with ESC and a newline: exit 1');
like($e, qr/^gpuplan: cannot open case file '\Q$tmp\E\/no\\027\[31m\\nsuch.json': .*'\Q$tmp\E\/no\\027\[31m\\nsuch.json': No such file/,
     'the path escaped');
is(scalar(split /\n/, $e), 1, 'one line');
($c, $o, $e) = run_gp('catalog', 'check', "$tmp/d\e[31m");
is($e, "gpuplan: no such directory: $tmp/d\\027[31m\ngpuplan: 1 error in $tmp/d\\027[31m\n",
   'catalog check escapes the directory');

my $rec = "$tmp/rec";
make_path($rec);
for my $case (['local function f() f() end', 'f()'],
              ['local function f() local t = { f() } return t end', 'f()'],
              ['local t = {}', 'for i = 1, 1e9 do t[i] = { i } end']) {
    write_file("$rec/a.lua", join("\n", @$case) . "\n");
    local $ENV{GPUPLAN_CATALOG} = $rec;
    ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm');
    is($c, 1, "a catalog file '$case->[0]': exit 1");
    like($e, qr/^gpuplan: \Q$rec\E\/a.lua:\d: (stack overflow \(a function that calls itself without end\?\)|catalog file uses too much memory \(limit 64 MiB\))$/,
         'names the file and line');
    clean_error($e, "catalog file '$case->[0]'");
}

# --- 15. Issue 19.14: job:step (a C method) reports a misuse as the Lua
# modules do: the script's line, one line, no traceback through the CLI.
write_file("$tmp/step.lua", <<'LUA');
local gp = require "gpuplan"
local job = gp.train_job { model = "llama3-70b", gpu = "h100-sxm", gpus = 64, seq = 8192 }
local r = job:step { tp = 3 }
LUA
($c, $o, $e) = run_gp('run', "$tmp/step.lua");
is($c, 1, 'job:step with tp 3 of 64 GPUs: exit 1');
is($e, "gpuplan: $tmp/step.lua:3: step: gpus 64 is not a multiple of tp*pp*cp = 3\n",
   'one line naming the script\'s line, no traceback');
write_file("$tmp/step.lua", <<'LUA');
local gp = require "gpuplan"
local job = gp.train_job { model = "llama3-70b", gpu = "h100-sxm", gpus = 64, seq = 8192 }
local r = job:step { tpp = 2 }
LUA
($c, $o, $e) = run_gp('run', "$tmp/step.lua");
is($e, "gpuplan: $tmp/step.lua:3: bad argument #1 to 'step' (step: unknown option 'tpp' (did you mean 'tp'?))\n",
   'an unknown field: one line naming it');
# --- 16. Issue 19.5, 19.8 and 19.10: plan's inputs.  The card list is
# bounded (5,000 ids took 314 s and 3.56 GB; a repeated id is refused at
# once since followups26, as a repeated --gpus count is); an input
# error the training step refuses is an error naming it, not "no layout
# fits" with exit 0; --top below 1 and an empty card id are refused.
{
    use Time::HiRes qw(time);
    my $t0 = time;
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', join(',', ('h100-sxm') x 5000), '--gpus', '8');
    my $dt = time - $t0;
    is($c, 1, 'plan --gpu with one id 5,000 times: refused, a list naming a card twice') or diag $e;
    is($e, "gpuplan: plan: --gpu lists 'h100-sxm' twice\n", '... naming the card');
    ok($dt < 10, "... in seconds (took ${dt} s)");
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', join(',', map { "g$_" } 1 .. 65));
    is($c, 1, 'plan --gpu with 65 different ids: refused');
    is($e, "gpuplan: plan: --gpu: at most 64 different cards in one search\n", 'naming the limit');
    write_file("$tmp/ids.lua", <<'LUA');
local gp = require "gpuplan"
local ids = {}
for i = 1, 10000 do ids[i] = i % 2 == 1 and "h100-sxm" or "b200" end
print(pcall(gp.sweep, { model = "llama3-8b", gpu = ids, gpus = 8, top = 2, scaling = false }))
print(pcall(gp.sweep, { model = "llama3-8b", gpu = { "h100-sxm", 7 }, gpus = 8 }))
print(pcall(gp.sweep, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, top = 0 }))
LUA
    ($c, $o, $e) = run_gp('run', "$tmp/ids.lua");
    is($c, 0, 'gp.sweep with 10,000 ids (two cards alternating)') or diag $e;
    like($o, qr/^false\t(?:\S+ids\.lua:\d+: )?sweep: gpu lists 'h100-sxm' twice$/m,
         'refused at the first repeat, as gpus = {8, 8} is');
    like($o, qr/^false\t(?:\S+ids\.lua:\d+: )?sweep: gpu\[2\] must be a GPU id \(got 7\)$/m, 'a number among the ids: named');
    like($o, qr/^false\t(?:\S+ids\.lua:\d+: )?sweep: top must be an integer 1\.\.100000 \(got 0\)$/m, 'gp.sweep top = 0: refused');

    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--tokens', '1e300');
    is($c, 1, 'plan --tokens 1e300: an error');
    # the text typed (a --tokens of 2B is read from its text)
    is($e, "gpuplan: plan: --tokens must be a positive number up to 1e+15 (got 1e300)\n",
       'naming the input and its bound, as train does, as the plan\'s own');
    is($o, '', 'no "no layout fits"');
    (my $c2, my $o2, my $e2) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e300');
    (my $same = $e2) =~ s/^gpuplan: train: /gpuplan: plan: /;
    is($same, $e, 'train says the same, as its own');
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--nics', '0', '--gpus', '8,64',
                          '--format', 'json');
    is($c, 1, 'plan --nics 0 --gpus 8,64: an error, not a JSON that counts errors');
    like($e, qr/^gpuplan: plan: 64 GPUs span 8 nodes of 8, but --nics 0 leaves system 'dgx-h100' no NICs to reach the others: give --nics N above 0$/m,
         'naming the count and what to give');
    clean_error($e, 'plan --nics 0');

    for my $top ('0', '-1') {
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--top', $top);
        is($c, 1, "plan --top $top: an error");
        like($e, qr/^gpuplan: plan: --top must be a whole number 1\.\.100000 \(got $top\)$/m,
             '... naming it');
    }
    # A split's bound below 1 or past 2^24: named by the flag typed, not
    # the Lua key or the binding's ("sweep.vpp_max must be an integer >= 1").
    for my $k (['--vpp-max', '0', 'vpp_max'], ['--tp-max', '-1', 'tp_max'],
               ['--cp-max', '2147483647', 'cp_max']) {
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', $k->[0], $k->[1]);
        is($c, 1, "plan $k->[0] $k->[1]: an error");
        (my $flag = $k->[2]) =~ s/_/-/g;
        is($e, "gpuplan: plan: --$flag must be a whole number 1..16777216 (got $k->[1])\n",
           '... naming it');
    }
    for my $g ('', ',', 'h100-sxm,,b200', ' ') {
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', $g);
        is($c, 2, "plan --gpu '$g': a usage error");
        like($e, qr/^gpuplan: plan: --gpu expects GPU ids separated by commas, got '\Q$g\E'$/m,
             '... naming it');
    }
}

# --- 17. Issue 19.15: leftovers -- each an error naming the input.
for my $t (
    # Llama 3 8B's context is 8192 tokens (max_seq); the catalog's Llama
    # 3.1 8B, the same family and shape, holds 131072 (its max_seq).
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--input', '100000'], 1,
     qr/^gpuplan: infer: --input 100000 \+ --output 256 tokens exceed llama3-8b's context of 8192 tokens \(max_seq\); llama3\.1-8b of the same family and shape holds it \(context 131072\)$/],
    # 2^40 sequences a step: a 1e11 s step before; counts stop at 2^24.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--global-batch', '1099511627776'], 1,
     qr/^gpuplan: train: --global-batch must be a whole number 1\.\.16777216 \(got 1099511627776\)$/],
    [['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '2147483648'], 1,
     qr/^gpuplan: fit: --batch must be a number in \[1, 16777216\] \(got 2147483648\)$/],
    [['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--batch', '2147483648'], 1,
     qr/^gpuplan: fit: --batch must be a number in \[1, 16777216\] \(got 2147483648\)$/],
    [['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'lora', '--lora-rank', '100000'], 1,
     qr/^gpuplan: fit: --lora-rank 100000 is above the model's hidden size 4096/],
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--disagg'], 2,
     qr/^gpuplan: infer: --disagg needs --gpus N: the prefill and decode pools together \(at least 2\)$/m],
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--mtp', '0'], 1,
     qr/^gpuplan: infer: --mtp must be a whole number 1\.\.16 \(got 0\)$/],
    # --mtp's declared range is the engine's (serve.c: 0..16, 0 left out):
    # 0 said 1..16777216, 100 said [0, 16], each range letting in what
    # the other refused.
    [['infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '8', '--mtp', '100'], 1,
     qr/^gpuplan: infer: --mtp must be a whole number 1\.\.16 \(got 100\)$/],
    # --batch 0 was refused by every command in its own words, while -1
    # said "[0, 16777216]", a range that lets 0 in: one range, [1, 2^24].
    (map { my $c = $_;
           ([[@$c, '--batch', '0'], 1, qr/--batch must be a number in \[1, 16777216\] \(got 0\)$/],
            [[@$c, '--batch', '-1'], 1, qr/--batch must be a number in \[1, 16777216\] \(got -1\)$/]) }
     ['train', 'llama3-8b', '--gpu', 'h100-sxm'], ['rl', 'llama3-8b', '--gpu', 'h100-sxm'],
     ['infer', 'llama3-8b', '--gpu', 'h100-sxm'], ['fit', 'llama3-8b', '--gpu', 'h100-sxm'],
     ['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer']),
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--acceptance', '0.5'], 2,
     qr/^gpuplan: infer: --acceptance is the MTP drafts' acceptance: it needs --mtp N/],
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--dp-attention'], 2,
     qr/^gpuplan: infer: --dp-attention needs an instance of more than one GPU/],
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--no-two-batch-overlap'], 2,
     qr/^gpuplan: infer: --two-batch-overlap applies with expert parallelism \(--ep > 1\)/],
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--two-batch-overlap'], 2,
     qr/^gpuplan: infer: --two-batch-overlap applies with expert parallelism \(--ep > 1\)/],
    [['infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '8', '--tp', '8', '--ep', '4',
      '--weights', 'fp8', '--imbalance', '2'], 2,
     qr/^gpuplan: infer: --imbalance applies with the experts split over the whole instance \(ep equal to tp\): --ep 4 inside --tp 8 slices them in groups with no all-to-all;/],
    ) {
    my ($args, $code, $re) = @$t;
    ($c, $o, $e) = run_gp(@$args);
    my $name = join(' ', @$args[0 .. 1], @$args[4 .. $#$args]);
    is($c, $code, "$name: exit $code");
    like($e, $re, "$name: names the input and its limit");
}
# --- A command's error names options by their flags, not the Lua keys
# the function it calls names them by: every key with an underscore
# wherever it stands, a one-word key where the message writes it as an
# option (opening it, "key = value", a number beside a count), elsewhere
# in the sentence it is a word: "the MTP drafts' acceptance".
for my $t (
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--fp8-scaling', 'current'],
     "gpuplan: train: --fp8-scaling current is how fp8 casts are scaled: it needs --precision fp8 (got bf16)\n", 2],
    # fp8_scaling's values are its declaration's, checked where the flag is read.
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--precision', 'fp8', '--fp8-scaling', 'tensorwise'],
     "gpuplan: train: --fp8-scaling must be delayed, current or block (got 'tensorwise')\n", 2],
    # Packed samples longer than the sequence they are packed into.
    [['train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--seq', '4096', '--packed-len', '5000'],
     "gpuplan: train: --packed-len is the length of the samples packed into each sequence: at most seq (got --packed-len 5000, --seq 4096)\n", 2],
    # ... and shorter than one token (0 alone means not packed).
    [['train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--seq', '4096', '--packed-len', '0.5'],
     "gpuplan: train: --packed-len is the length of the samples packed into each sequence: at least 1 token, or 0 for none (got --packed-len 0.5)\n"],
    [['infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--ep', '16', '--single-batch-overlap',
      '--two-batch-overlap'],
     "gpuplan: infer: --single-batch-overlap is the overlap of a step without --two-batch-overlap; give one of them\n", 2],
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--acceptance', '0.5'],
     "gpuplan: infer: --acceptance is the MTP drafts' acceptance: it needs --mtp N (draft tokens per step)\n", 2],
    ) {
    # options that do not go together are a usage error (exit 2, the
    # usage lines after the message); a bad value is an error (exit 1)
    my ($args, $want, $code) = (@$t, 1);
    ($c, $o, $e) = run_gp(@$args);
    is($c, $code, "@$args[0, -1]: exit $code");
    is(message_of($e, $code, $args->[0]), $want, "@$args[0, -1]: names the flags typed");
}
# An option nobody typed is named by its flag too: the user reads the
# command line's names only (output's default is --output 256).
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--input', '100000');
like($e, qr/--input 100000 \+ --output 256 tokens/, 'an option not typed: its flag too');

# The catalog refuses what a command would: a GPU whose achievable has no
# 16-bit GEMM fraction (infer said "device has no fp16 tensor compute"), a
# TDP of 1e300 kW, hidden not divisible by heads, a patch wider than the
# image -- each at its file:line (tests/fixtures/catalog/semantic, lines
# 40-43, through section 5's replay).
my $lo = "$tmp/leftover";
make_path($lo);
write_file("$lo/a.lua", "gpu { id = 'no-gemm', name = 'x', vendor = 'T', arch = 'hopper', memory = GiB(80), "
    . "mem_bw = '3TB/s', peak = { bf16 = '900TFLOPS' }, source = 't', "
    . "achievable = { hbm = 0.8, reason = 't', source = 't' } }\n");
($c, $o, $e) = run_gp('catalog', 'check', $lo);
is($c, 1, 'catalog check of a GPU without a 16-bit GEMM fraction: exit 1');
like($e, qr/^\Q$lo\E\/a.lua:1: gpu 'no-gemm': field 'achievable.gemm' \(gpu\): no bf16 or fp16 fraction/m,
     'refused at its line, as infer would');
# --- 18. Issue 19.11: merge checks what it reads.  Forged figures, a card
# not in the plan, a shard of another catalog, malformed lines and a line
# past the size cap: each an error naming the shard's file:line, never a
# line of gpuplan's own code, never merged.
{
    my @sh;
    for my $k (1, 2) {
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,b200', '--gpus', '8,16',
                              '--tokens', '1e10', '--policy', 'fastest', '--shard', "$k/2", '--format', 'json');
        is($c, 0, "plan shard $k/2") or diag $e;
        push @sh, $o;
    }
    like($sh[0], qr/^\{[^\n]*"fingerprint":"[0-9a-f]{16}"/, 'a shard\'s plan line carries a fingerprint');
    write_file("$tmp/m2.json", $sh[1]);
    my $forge = sub {
        my ($line, $from, $to) = @_;
        my @l = split /\n/, $sh[0];
        $l[$line - 1] =~ s/$from/$to/ or die "no $from in line $line";
        write_file("$tmp/m1.json", join("\n", @l) . "\n");
        return run_gp('merge', "$tmp/m1.json", "$tmp/m2.json");
    };
    my @cases = (
        [2, qr/"gpus":\d+/, '"gpus":0', qr/result field 'gpus' must be >= 1 and <= 16777216 \(got 0\)/],
        [2, qr/"step_s":[^,]+/, '"step_s":-1', qr/result field 'step_s' must be > 0 and below 2\^53 \(got -1\)/],
        [2, qr/"cost":[^,]+/, '"cost":-5', qr/result field 'cost' must be >= 0 and below 2\^53 \(got -5\)/],
        [2, qr/"mfu":[^,]+/, '"mfu":7.5', qr/result field 'mfu' must be >= 0 and <= 1 \(got 7.5\)/],
        [2, qr/"gpu":"[^"]+"/, '"gpu":"nosuch"', qr/the result's gpu 'nosuch' is not card \d of the plan's --gpu/],
        [2, qr/"tokens_per_s":[^,]+/, '"tokens_per_s":1e308', qr/result field 'tokens_per_s' must be > 0 and below 2\^53 \(got 1e\+308\)/],
        [2, qr/"score":[^,]+/, '"score":1e-30', qr/the result's score 1e-30 is not its time score /],
        [2, qr/"cost":[^,]+/, '"cost":1', qr/the result's cost 1 is not train_s x gpus x price/],
        [2, qr/"layout":"[^"]+"/, '"layout":"TP8 DP1"', qr/the result's layout 'TP8 DP1' is not its degrees' label/],
        [2, qr/"tp":\d+/, '"tp":3', qr/the result's tp x pp x cp x ulysses x dp = 3 x /],
        [2, qr/"gpus":\d+/, '"gpus":"8"', qr/result field 'gpus' must be an integer \(got "8"\)/],
        [2, qr/\}$/, ',"extra":1}', qr/unknown field "extra" in a result line/],
        [2, qr/"index":\d+/, '"index":1', qr/layout 1 is shard 2\/2's, not 1\/2's/],
        [1, qr/"layouts":\d+/, '"layouts":-3', qr/stats\.\S+ field 'layouts' must be >= 0/],
        [1, qr/"stats":\{/, '"stats":{"zz":{},', qr/the plan's stats name a card not in its --gpu \("zz"\)/],
        [1, qr/"gpu":\[[^\]]*\]/, '"gpu":"h100-sxm"', qr/the plan's job has no gpu list/],
        [1, qr/"gpus":(?:\d+|\[[^\]]*\])/, '"gpus":"x"', qr/the plan's job\.gpus: gpus 'x': expected counts/],
        [1, qr/"fingerprint":"[^"]*",/, '', qr/plan line without 'fingerprint'/],
        [1, qr/"policy":"fastest"/, '"policy":"x"', qr/the plan's policy is not one plan writes/],
        [2, qr/^.*$/, '{"kind":"result"', qr/not a JSON object/],
        [2, qr/^.*$/, '[1,2]', qr/kind must be "plan", "result" or "runner_up" \(got nil\)/],
        # found by tests/lua/fuzz_merge.t: a hole in a list, a range's
        # record or one end of it (plan.lua and ranges.lua raised on them)
        [1, qr/"defaults":\["[^"]*"/, '"defaults":[null', qr/plan field 'defaults' must be a list of strings, each one line/],
        [2, qr/"level":0.8/, '"level":"x"', qr/result range field 'level' must be a number \(got "x"\)/],
        [2, qr/"mfu_hi":[^,]+,/, '', qr/the result's mfu_lo and mfu_hi are not a range/],
    );
    for my $k (@cases) {
        my ($line, $from, $to, $want) = @$k;
        ($c, $o, $e) = $forge->($line, $from, $to);
        is($c, 1, "a forged line ($to): refused");
        like($e, qr/^gpuplan: merge: \Q$tmp\E\/m1\.json:$line: /, '... naming the shard\'s file:line');
        like($e, $want, '... and what is wrong') or diag $e;
        clean_error($e, "merge of $to");
        is($o, '', '... nothing merged');
    }
    # Found by tests/lua/fuzz_plan.t: a card named twice was searched
    # once and merge took the card's place for another.  Since followups26
    # a card named twice is refused, as a count listed twice is: no JSON
    # for merge to misread.
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,b200,h100-sxm', '--format', 'json');
    is($c, 1, 'plan --gpu h100-sxm,b200,h100-sxm: refused');
    like($e, qr/^gpuplan: plan: --gpu lists 'h100-sxm' twice$/m, '... naming the card') or diag $e;
    is($o, '', '... no JSON');
    # More results than the plan's --top (5): a sixth line.
    my @l = split /\n/, $sh[0];
    write_file("$tmp/m1.json", join("\n", @l, ($l[-1]) x (7 - @l)) . "\n");
    ($c, $o, $e) = run_gp('merge', "$tmp/m1.json", "$tmp/m2.json");
    is($c, 1, 'a shard with more results than its --top: refused');
    like($e, qr/m1\.json:\d+: (more results than the plan's --top \(5\)|the layout of \S+ again)/, '... named');
    # A line of 2 MiB: refused at the cap, without reading it whole.
    write_file("$tmp/m1.json", $l[0] . "\n" . ('x' x (2 * 1024 * 1024)) . "\n");
    ($c, $o, $e) = run_gp('merge', "$tmp/m1.json", "$tmp/m2.json");
    is($c, 1, 'a line of 2 MiB: refused');
    is($e, "gpuplan: merge: $tmp/m1.json:2: a line of more than 1048576 bytes (1 MiB): not a plan shard\n",
       '... naming the cap');
    # A shard of another catalog: a user directory adds a model.
    my $other = "$tmp/othercat";
    make_path($other);
    write_file("$other/m.lua", 'model { id = "extra-tiny", name = "x", layers = 2, hidden = 64, heads = 1, ffn_hidden = 128, vocab = 100, params_b = 0.0001, norm = "layer", source = "t" }' . "\n");
    {
        local $ENV{GPUPLAN_CATALOG} = $other;
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,b200', '--gpus', '8,16',
                              '--tokens', '1e10', '--policy', 'fastest', '--shard', '1/2', '--format', 'json');
    }
    is($c, 0, 'a shard planned with another catalog') or diag $e;
    write_file("$tmp/m1.json", $o);
    ($c, $o, $e) = run_gp('merge', "$tmp/m1.json", "$tmp/m2.json");
    is($c, 1, 'merged with a shard of the shipped catalog: refused');
    like($e, qr/^gpuplan: merge: \Q$tmp\E\/m2\.json is a shard of another search than \Q$tmp\E\/m1\.json \(its fingerprint of gpuplan's version, the catalog and the options differs: [0-9a-f]{16} against [0-9a-f]{16}\)$/,
         '... naming the fingerprint');
    write_file("$tmp/m1.json", $sh[0]);
    ($c, $o, $e) = run_gp('merge', "$tmp/m1.json", "$tmp/m2.json");
    is($c, 0, 'the two true shards merge') or diag $e;
    ($c, my $whole, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,b200', '--gpus', '8,16',
                                 '--tokens', '1e10', '--policy', 'fastest');
    # the counts differ (each shard's bound prunes against its own best)
    s/^searched.*\n//m for $o, $whole;
    is($o, $whole, '... into the whole search\'s answer');
}

# --cuda-graph-scope captures Transformer Engine's fused layer: on the hf
# stack's eager modules (the default kernels there) it would change
# nothing, so it is refused, naming the flag and the kernels.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--cuda-graph-scope', 'attn');
is($c, 2, '--cuda-graph-scope with eager kernels: refused, a usage error (two options)');
is(message_of($e, 2, 'train'), "gpuplan: train: --cuda-graph-scope captures Transformer Engine's fused kernels; with "
       . "--kernels eager (--stack hf) there are none to capture: give --kernels fused\n",
   '... naming the flag and the kernels');

# --cuda-graph-scope full_iteration is the whole step's graph (Megatron-Core
# refuses it beside the per-layer graphs): alone, or refused naming the flag.
($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'b200', '--gpus', '8', '--ep', '8',
                      '--stack', 'megatron', '--seq', '4096', '--global-batch', '512',
                      '--cuda-graph-scope', 'attn,full_iteration');
is($c, 1, '--cuda-graph-scope full_iteration beside a layer scope: refused');
is($e, "gpuplan: train: --cuda-graph-scope: full_iteration captures the whole forward-backward "
       . "step, every layer's scopes with it: give it alone (got attn,full_iteration)\n",
   '... naming the flag and what it got');
($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'b200', '--gpus', '8', '--ep', '8',
                      '--stack', 'megatron', '--seq', '4096', '--global-batch', '512',
                      '--cuda-graph-scope', 'full_iteration');
is($c, 0, '--cuda-graph-scope full_iteration alone: accepted') or diag $e;

# A scope or module named twice is refused, naming the flag and the name
# (it was taken once, in silence; a Lua list with a hole raised from
# inside gpuplan: tests/lua/option_lists.t).
($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'b200', '--gpus', '8', '--ep', '8',
                      '--stack', 'megatron', '--cuda-graph-scope', 'attn,attn');
is($c, 1, '--cuda-graph-scope attn,attn: refused');
is($e, "gpuplan: train: --cuda-graph-scope names 'attn' twice\n", '... naming the flag and the scope');
($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'b200', '--gpus', '8', '--ep', '8',
                      '--stack', 'megatron', '--recompute-modules', 'moe_act,moe_act');
is($c, 1, '--recompute-modules moe_act,moe_act: refused');
is($e, "gpuplan: train: --recompute-modules names 'moe_act' twice\n",
   '... naming the flag and the module');

# --moe-flex-sms is SMs of the card the kernels run on: more than the
# card has (an H100's 132) is refused, naming the flag and the card.
($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '8',
                      '--stack', 'megatron', '--moe-dispatcher', 'flex', '--moe-flex-sms', '200');
is($c, 1, '--moe-flex-sms 200 on an H100: refused');
is($e, "gpuplan: train: --moe-flex-sms 200 is more SMs than h100-sxm has (132)\n",
   '... naming the flag, the card and its SMs');
($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '8',
                      '--stack', 'megatron', '--moe-dispatcher', 'flex', '--moe-flex-sms', '132');
is($c, 0, '--moe-flex-sms 132 (all of them): accepted') or diag $e;

# --moe-balance none leaves a MoE router unbalanced: a dense model has
# none, so it is refused rather than ignored (rl reaches the same check).
($c, $o, $e) = run_gp('rl', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--moe-balance', 'none');
is($c, 1, '--moe-balance none on a dense model: refused');
is($e, "gpuplan: rl: --moe-balance none is how a MoE router spreads tokens; llama3.2-1b has "
       . "no experts\n", '... naming the flag and the model');

# --moe-router-dtype is the MoE router's dtype: a dense model has no
# router, so it is refused rather than ignored; on a MoE model fp64
# prices the router's GEMMs at the card's FP64 rate, a longer step.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h20', '--gpus', '8',
                      '--moe-router-dtype', 'fp64');
is($c, 1, '--moe-router-dtype on a dense model: refused');
is($e, "gpuplan: train: --moe-router-dtype is a MoE router's; llama3-8b has no experts\n",
   '... naming the flag and the model');
my @r30 = ('train', 'qwen3-30b-a3b', '--gpu', 'h20', '--gpus', '8', '--ep', '8',
           '--method', 'pretrain', '--format', 'csv');
my ($c16, $o16) = run_gp(@r30);
my ($c64, $o64) = run_gp(@r30, '--moe-router-dtype', 'fp64');
my ($s16) = $o16 =~ /^step,([\d.e+-]+)/m;
my ($s64) = $o64 =~ /^step,([\d.e+-]+)/m;
ok($c16 == 0 && $c64 == 0 && defined $s16 && defined $s64 && $s64 > $s16,
   '--moe-router-dtype fp64: the float64 router lengthens the step');

# --rank-skew draws each rank's share of sequences at their own lengths;
# --pad evens the shares: refused, each named by its flag.
($c, $o, $e) = run_gp('rl', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '8', '--rank-skew', '--pad');
is($c, 1, '--rank-skew with --pad: refused');
is($e, "gpuplan: rl: --pad makes every rank's share even; --rank-skew is each rank's unbalanced "
       . "share of sequences at their own lengths\n", '... naming both flags');

# --count-split prices micro-batches of sequences at their own random
# lengths under the pipeline; --token-batch cuts them to even tokens:
# refused, each named by its flag.  With --pp 2 and base-checkpoint
# lengths the CLI says the stretch it priced.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '16', '--tp', '2', '--pp', '2',
                      '--batch', '2', '--response-max', '8192', '--count-split', '--token-batch', '16384');
is($c, 1, '--count-split with --token-batch: refused');
is($e, "gpuplan: rl: --count-split is micro-batches of sequences at their own lengths; "
       . "--token-batch cuts them into micro-batches of even tokens\n", '... naming both flags');
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '16', '--tp', '2', '--pp', '2',
                      '--batch', '2', '--response-max', '8192', '--base-checkpoint', '--count-split');
is($c, 0, '--count-split under --pp 2: runs');
like($o, qr/micro-batches at random lengths stretch the pipeline x1\.\d\d \(update\), x1\.\d\d \(forwards\)/,
     '--count-split: the training line says the stretch');

# --token-batch cuts each rank's share into micro-batches by tokens
# (verl's use_dynamic_bsz): 8 ranks of 128 / 8 = 16 samples of 100 + 1000
# tokens, ceil(17600 / 4096) = 5 micro-batches a rank, 40 in all, of
# 17600 / 5 = 3520 tokens; --pad contradicts it, each named by its flag.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1',
                      '--prompts', '64', '--group', '8', '--prompt-len', '100',
                      '--response-len', '1000', '--response-max', '1800',
                      '--response-dist', 'uniform', '--global-batch', '128',
                      '--token-batch', '4096', '--format', 'json');
is($c, 0, '--token-batch 4096: runs');
like($o, qr/"pack_bins":40[,}]/, '--token-batch 4096: 5 micro-batches a rank, 40 in all');
like($o, qr/"train_seq":3520[,}]/, '--token-batch 4096: 3520 tokens each');
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--token-batch', '4096',
                      '--pad');
is($c, 1, '--token-batch with --pad: refused');
is($e, "gpuplan: rl: --token-batch cuts micro-batches of sequences at their own lengths by "
       . "tokens; --pad pads them to the limit\n", '... naming both flags');

# --- ep_overlap where Megatron-Core refuses overlap_moe_expert_parallel_comm
# (TransformerConfig.__post_init__'s asserts; engine/train_prep.c
# check_ep_overlap): one line naming the flags typed, exit 1.
my @q3 = ('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep-overlap');
for my $t (
    [['train', @q3, '--ep', '8', '--recompute', 'full'],
     "gpuplan: train: --recompute full with --ep-overlap: Megatron-Core refuses it (\"disable full "
     . "recomputation when enabling overlap_moe_expert_parallel_comm\"); selective or none can run\n", 2],
    [['train', @q3, '--ep', '8', '--pp', '2'],
     "gpuplan: train: --ep-overlap at --pp 2 needs the interleaved schedule, --vpp >= 2: Megatron-Core "
     . "requires virtual_pipeline_model_parallel_size \"when pipeline_model_parallel_size > 1\"\n", 2],
    [['train', @q3],
     "gpuplan: train: --ep-overlap needs expert parallelism, --ep >= 2 (got --ep 1): Megatron-Core's "
     . "overlap_moe_expert_parallel_comm \"is only supported with expert model parallelism\"\n", 2],
    [['train', @q3, '--ep', '8', '--moe-dispatcher', 'allgather'],
     "gpuplan: train: --moe-dispatcher allgather with --ep-overlap: Megatron-Core overlaps the "
     . "alltoall and flex dispatchers only (\"supported with alltoall/flex token dispatcher\")\n", 2],
    [['train', @q3, '--ep', '8', '--precision', 'fp32'],
     "gpuplan: train: --precision fp32 with --ep-overlap: Megatron-Core's overlap \"is only "
     . "supported with bf16 or fp16 model\" (fp8 runs on one)\n", 2],
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep-overlap'],
     "gpuplan: train: --ep-overlap overlaps the expert all-to-all; llama3-8b has no experts\n"],
    [['plan', @q3, '--recompute', 'full', '--ep-max', '8'],
     "gpuplan: plan: --recompute full is the only policy to try, and Megatron-Core refuses it "
     . "with --ep-overlap: give selective or none too\n", 2],
    [['plan', @q3, '--ep-max', '1'],
     "gpuplan: plan: --ep-overlap needs expert parallelism (ep >= 2): give --ep-max 2 or more "
     . "(got 1)\n", 2],
    ) {
    my ($args, $want, $code) = (@$t, 1);
    ($c, $o, $e) = run_gp(@$args);
    my $name = join(' ', @$args[0, 1, 6 .. $#$args]);
    is($c, $code, "$name: exit $code");
    is(message_of($e, $code, $args->[0]), $want, "$name: names the flags typed");
}
# --- the flex dispatcher's backend and CUDA_DEVICE_MAX_CONNECTIONS: a
# backend beside another dispatcher, an unknown one, and connections
# outside CUDA's 1..32, each one line naming the flag: exit 2 for an
# option beside a dispatcher it is not (a usage error), 1 for a bad value.
my @q3f = ('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '16');
for my $t (
    [['train', @q3f, '--moe-flex-backend', 'hybridep'],
     "gpuplan: train: --moe-flex-backend hybridep is the flex dispatcher's backend; give "
     . "--moe-dispatcher flex (got alltoall)\n", 2],
    [['train', @q3f, '--moe-dispatcher', 'flex', '--moe-flex-backend', 'nccl'],
     "gpuplan: train: --moe-flex-backend must be deepep or hybridep (got 'nccl')\n", 2],
    [['train', @q3f, '--moe-flex-sms', '32'],
     "gpuplan: train: --moe-flex-sms is the flex dispatcher's SMs; give --moe-dispatcher flex "
     . "(got alltoall)\n", 2],
    [['train', @q3f, '--cuda-device-max-connections', '33'],
     "gpuplan: train: --cuda-device-max-connections must be a whole number 1..32 (got 33)\n"],
    ) {
    my ($args, $want, $code) = (@$t, 1);
    ($c, $o, $e) = run_gp(@$args);
    my $name = join(' ', @$args[0, 1, 8 .. $#$args]);
    is($c, $code, "$name: exit $code");
    is(message_of($e, $code, $args->[0]), $want, "$name: names the flag typed");
}
# Both given as a run states them: exit 0, the EP time of one connection
# with the overlap above that of 32 (0.501 of it hides, not all).
my @q3o = ('train', @q3f, '--moe-dispatcher', 'flex', '--moe-flex-backend', 'hybridep',
           '--ep-overlap', '--seq', '4096', '--global-batch', '64', '--format', 'csv');
my %ep;
for my $n (1, 32) {
    ($c, $o, $e) = run_gp(@q3o, '--cuda-device-max-connections', $n);
    is($c, 0, "flex hybridep, $n connections: exit 0") or diag $e;
    ($ep{$n}) = $o =~ /^ep_comm,([\d.eE+-]+)/m;
}
ok(defined $ep{1} && defined $ep{32} && $ep{1} > $ep{32},
   'one connection: more of the expert all-to-all exposed than with 32');
# --moe-flex-sms: the compute beside the overlapped dispatch runs on the
# SMs the kernels leave, so 32 of them expose more than 8.
my %sm;
for my $n (8, 32) {
    ($c, $o, $e) = run_gp(@q3o, '--moe-flex-sms', $n);
    is($c, 0, "--moe-flex-sms $n: exit 0") or diag $e;
    ($sm{$n}) = $o =~ /^ep_comm,([\d.eE+-]+)/m;
}
ok(defined $sm{8} && defined $sm{32} && $sm{32} > $sm{8}, '--moe-flex-sms 32: more exposed than 8');
# The plan skips those layouts instead of failing on them: with EP up to 8
# and VPP up to 2 it lists none at EP 1, at PP > 1 without VPP, or with
# full recompute -- the same search without --ep-overlap lists some.
my @sq = ('plan', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '16', '--seq', '4096',
          '--ep-max', '8', '--vpp-max', '2', '--top', '200', '--format', 'csv');
# The layouts of a CSV plan (its label: "TP1 PP2x2 EP8 DP8 ZeRO-1 mb1
# none": PPpxv with interleaving, no EP when ep is 1, the policy last)
# that Megatron-Core refuses with the overlap, and all of them.
sub megatron_refuses {
    my ($csv) = @_;
    my @rows = split /\n/, $csv;
    shift @rows;
    my ($n, $all) = (0, 0);
    for (@rows) {
        my $label = (split /,/)[2];
        my ($pp, $vpp) = $label =~ /\bPP(\d+)(?:x(\d+))?\b/ ? ($1, $2 // 1) : (1, 1);
        my $ep = $label =~ /\bEP(\d+)\b/ ? $1 : 1;
        my $rec = (split / /, $label)[-1];
        $all++;
        $n++ if $ep < 2 || ($pp > 1 && $vpp < 2) || $rec eq 'full';
    }
    return ($n, $all);
}
($c, $o, $e) = run_gp(@sq);
is($c, 0, 'plan without --ep-overlap runs');
my ($n_off) = megatron_refuses($o);
ok($n_off > 0, 'without --ep-overlap it lists layouts Megatron-Core would refuse with it');
($c, $o, $e) = run_gp(@sq, '--ep-overlap');
is($c, 0, 'plan --ep-overlap runs, skipping them') or diag $e;
my ($n_on, $all_on) = megatron_refuses($o);
is($n_on, 0, 'plan --ep-overlap lists none of them');
ok($all_on > 0, 'plan --ep-overlap still lists layouts');

done_testing();
