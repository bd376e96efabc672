# What a seventh walk (a new user's first hour: the README, each command,
# the example scripts, a user catalog, plausible mistakes) found: an
# answer that was wrong, silent or malformed.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp qw(tempdir);
use JSON::PP ();

my ($c, $o, $e);

# 1. The example scripts that take no positional argument ran with one and
# dropped it in silence: grid_sweep's --gpus 64 128 (a list written with a
# space, not a comma) priced 64 alone, and video_sft's --train-vision maybe
# (a flag given a value) trained the tower with exit 0.  guide.lua and
# moe_serving.lua already refused a stray argument; now every script does,
# exit 2, naming it.
for my $s (qw(a100_vs_h200 budget_policy custom_catalog grid_sweep grpo h800_vs_h100 video_sft)) {
    ($c, $o, $e) = run_gp('run', "scripts/$s.lua", 'stray');
    is($c, 2, "$s.lua: a stray argument is a usage error") or diag $e;
    like($e, qr/^gpuplan: \Q$s\E: unexpected argument 'stray' \(see --help\)$/m,
         "$s.lua: the argument is named");
    is($o, '', "$s.lua: nothing priced before the refusal");
}
($c, $o, $e) = run_gp('run', 'scripts/grid_sweep.lua', '--gpus', '64', '128');
is($c, 2, 'grid_sweep --gpus 64 128: refused, not priced at 64 alone');
like($e, qr/unexpected argument '128'/, 'the dropped count is named');
($c, $o, $e) = run_gp('run', 'scripts/video_sft.lua', '--train-vision', 'maybe');
is($c, 2, 'video_sft --train-vision maybe: refused (the flag takes no value)');
like($e, qr/unexpected argument 'maybe'/, 'the value is named');

# 2. video_sft.lua's run is --samples x --epochs x the sequence in tokens,
# which gp.train bounds to 1..1e15: --epochs 0 or -1 and --samples 0 were
# refused from inside the layout search as "vlm.plan: train: tokens must be
# a positive number up to 1e+15 (got -3276800000)" -- -1 x 100000 videos
# x 32768 tokens, a name and a value the user never gave.  Now the option
# is named with its value (exit 1, as rl's --epochs 0 is), and a product
# past 1e15 names both factors (1e11 videos x 65536 tokens = 6.6e15).
for my $k (['--epochs', '0'], ['--epochs', '-1'], ['--samples', '0']) {
    ($c, $o, $e) = run_gp('run', 'scripts/video_sft.lua', @$k);
    is($c, 1, "video_sft $k->[0] $k->[1]: refused");
    like($e, qr/^gpuplan: video_sft: \Q$k->[0]\E must be a whole number >= 1 \(got \Q$k->[1]\E\)$/m,
         "video_sft $k->[0] $k->[1]: the option and its value named") or diag $e;
    unlike($e, qr/tokens must be/, "video_sft $k->[0] $k->[1]: not gp.train's tokens");
}
($c, $o, $e) = run_gp('run', 'scripts/video_sft.lua', '--samples', '100000000000');
is($c, 1, 'video_sft --samples 1e11: past 1e15 tokens, refused');
like($e, qr/--samples 100000000000 x --epochs 1 x 65536 tokens a sequence is past 1e15 tokens/,
     'both factors named');

# 3. infer: a stated --batch over the engine's cap (--max-batch, or
# TensorRT-LLM's max_batch_size of 2048) does not fit by the cap, and the
# advice after it named the memory levers ("try --weights int4, --kv fp8,
# more GPUs with --tp or --offload"), none of which raises the cap.  It
# now names the batch and the cap; a batch the KV cannot hold keeps the
# memory levers.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '300', '--max-batch', '100');
is($c, 0, 'infer --batch 300 --max-batch 100: an answer (does not fit), exit 0') or diag $e;
like($o, qr/^does not fit: batch 300 is over max_batch 100 \(the engine's sequences a step\); try a --batch of at most 100 or a larger --max-batch$/m,
     'the cap and its two levers') or diag $o;
unlike($o, qr/--weights int4|--offload/, 'no memory lever for a cap');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '3000');
like($o, qr/batch 3000 is over max_batch 2048 .*try a --batch of at most 2048 or a larger --max-batch$/m,
     'the default cap (2048) alike');
# Under the cap the KV refuses it: the default kv policy "mean" holds a
# sequence's mean length, 2048 + 256 / 2 = 2176 tokens, at 131072 B a
# token (32 layers x K and V x 8 KV heads x 128 x 2 B), so 3000 sequences
# need 3000 x 2176 x 131072 = 855.64 GB (printed to 0.01 GB: exact) -- the
# memory levers stay.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--batch', '3000', '--max-batch', '4096');
like($o, qr/^does not fit: batch 3000 needs 855\.64 GB of KV per GPU.*; try --weights int4, --kv fp8, more GPUs with --tp or --offload$/m,
     'over the KV, not the cap: the memory levers stay');

# 4. catalog show ID (and --explain ID) suggested the one nearest id by
# edits over every table: h100 -> 'b100', a100 -> 'a10' (one edit each,
# where h100-sxm is four) and llama3 -> nothing, while train --gpu h100
# lists the H100s first.  It now ranks as --gpu and MODEL rank (an id the
# name begins first), so the ids a new user means come first.
for my $a (['h100', "'h100-nvl', 'h100-sxm', 'h100-pcie', 'h100-sxm-96gb'"],
           ['a100', "'a100-sxm-40gb', 'a100-sxm-80gb', 'a100-pcie-80gb'"],
           ['llama3', "'llama3-8b', 'llama3-70b'"]) {
    ($c, $o, $e) = run_gp('catalog', 'show', $a->[0]);
    is($c, 1, "catalog show $a->[0]: refused");
    like($e, qr/^gpuplan: catalog show: unknown id '\Q$a->[0]\E' \(did you mean \Q$a->[1]\E[,?]/,
         "catalog show $a->[0]: the ids it begins first") or diag $e;
}
($c, $o, $e) = run_gp('catalog', 'show', 'H100-SXM');
is($e, "gpuplan: catalog show: unknown id 'H100-SXM' (did you mean 'h100-sxm'?)\n",
   'an id in another case: that id alone');

# 5. A user catalog's gpu with a misspelt arch (hoper) and no achievable
# of its own was refused as "field 'achievable': missing, and no arch
# 'hoper' entry gives defaults": a field the file never wrote, and no
# nearer name.  The error now names the arch field and the arch it means.
{
    my $d = tempdir(CLEANUP => 1);
    open(my $f, '>', "$d/my.lua") or die;
    print $f <<'LUA';
gpu {
  id = "mygpu", name = "My GPU", vendor = "NVIDIA",
  arch = "hoper", form_factor = "SXM5", year = 2022,
  memory = "80GiB", memory_type = "HBM3", mem_bw = "3.35TB/s", sms = 132,
  peak = { bf16 = "989TFLOPS", fp16 = "989TFLOPS" },
  scaleup = { fabric = "nvlink4", domain = 8 }, pcie = { gen = 5, lanes = 16 },
  tdp = "700W", source = "a test",
}
LUA
    close $f;
    ($c, $o, $e) = run_gp('catalog', 'check', $d);
    is($c, 1, 'a gpu with arch hoper: the catalog does not check');
    like($e, qr{^\Q$d\E/my\.lua:3: gpu 'mygpu': field 'arch': no arch 'hoper' in the catalog \(did you mean hopper\?\), and the gpu has no achievable of its own}m,
         'the arch field named, with the arch it means') or diag $e;
    unlike($e, qr/field 'achievable'/, 'not a field the file never wrote');
}

# 6. plan --svg BASE with BASE an existing directory named without its
# slash (--svg out): the three files went beside it (out-pareto.svg, ...;
# --svg /tmp wrote /tmp-pareto.svg at the root), exit 0 and nothing said.
# "out/" was already refused; now "out" is too, before anything is priced,
# and nothing is written.
{
    my $d = tempdir(CLEANUP => 1);
    mkdir "$d/out" or die;
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--svg', "$d/out");
    is($c, 2, 'plan --svg DIR: a usage error');
    like($e, qr{^gpuplan: plan: --svg '\Q$d\E/out' is a directory: BASE is the start of the files' names \(BASE-pareto\.svg \.\.\.\); to write them in it, e\.g\. --svg \Q$d\E/out/plan$}m,
         'the directory named, and how to write into it') or diag $e;
    is($o, '', 'nothing priced');
    my @written = glob("$d/out-*.svg $d/out/*.svg");
    is(scalar @written, 0, 'no file written beside it or in it');
}

# 7. infer --runtime vllm on an A100: stating --chunked-prefill, what vLLM
# V1 does by itself, turned the FlashAttention-2 mixed-step default off
# (llama3-8b: 1231 tok/s a GPU against the default's 773); --fa2-mixed with
# --no-chunked-prefill changed nothing in silence (no step mixes); and on a
# V100, where FlashAttention-2 does not run, --fa2-mixed priced its reads.
{
    my @j = ('infer', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--runtime', 'vllm');
    my ($c1, $def) = run_gp(@j, '--format', 'json');
    my ($c2, $stated) = run_gp(@j, '--chunked-prefill', '--format', 'json');
    my ($n, $m) = map { JSON::PP::decode_json($_)->{per_gpu} } $def, $stated;
    ok(defined $n && $n == $m, "--chunked-prefill stated: the default's tok/s a GPU ($n = $m)");
    ($c, $o, $e) = run_gp(@j, '--chunked-prefill');
    like($o, qr/--fa2-mixed \(vLLM V1 on FlashAttention-2, ampere/, '... and the default said');
    ($c, $o, $e) = run_gp(@j, '--fa2-mixed', '--no-chunked-prefill');
    is($c, 2, '--fa2-mixed --no-chunked-prefill: a usage error');
    like($e, qr/^gpuplan: infer: --fa2-mixed prices vLLM V1's steps that carry prompt chunks beside decodes: --no-chunked-prefill runs none \(each prompt in a step of its own\)$/m,
         'both flags named') or diag $e;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'v100-sxm2-32gb', '--runtime', 'vllm', '--fa2-mixed');
    is($c, 1, '--fa2-mixed on a V100: refused');
    like($e, qr/^gpuplan: infer: --fa2-mixed: FlashAttention-2 needs compute capability 8\.0 \(Ampere or later\); v100-sxm2-32gb \(volta\)/m,
         'the card and the capability named') or diag $e;
}

# 8. A misspelt command said "unknown command 'trian' (see 'gpuplan
# --help')" where a misspelt option names the nearest option; and a slip of
# --help, which no command's option table lists, was matched against the
# options alone (train --hlep: "did you mean '--ep'?", two edits, where
# --help is one transposition).
for my $a (['trian', 'train'], ['fti', 'fit'], ['infre', 'infer'], ['guid', 'guide']) {
    ($c, $o, $e) = run_gp($a->[0], 'x');
    is($c, 2, "gpuplan $a->[0]: a usage error");
    is($e, "gpuplan: unknown command '$a->[0]' (did you mean '$a->[1]'? see 'gpuplan --help')\n",
       "gpuplan $a->[0]: the command meant");
}
($c, $o, $e) = run_gp('frobnicate');
is($e, "gpuplan: unknown command 'frobnicate' (see 'gpuplan --help')\n", 'nothing near: the help alone');
for my $a (['train', '--hlep'], ['infer', '--hepl'], ['plan', '--hel']) {
    ($c, $o, $e) = run_gp(@$a);
    is($c, 2, "$a->[0] $a->[1]: a usage error");
    like($e, qr/^gpuplan: \Q$a->[0]\E: unknown option '\Q$a->[1]\E' \(did you mean '--help'\?\)$/m,
         "$a->[0] $a->[1]: --help named") or diag $e;
}
($c, $o, $e) = run_gp('train', '--ee');
like($e, qr/unknown option '--ee' \(did you mean '--ep'\?\)/, 'an option slip still names the option');

# 9. grid_sweep.lua --svg into a directory that is not there (or a name
# that is not .svg) printed the whole Pareto table and then failed at the
# write, naming the script's line and no option ("scripts/grid_sweep.lua:
# 89: cannot write ..."), as the commands' --svg once did.  Now checked
# before the sweep, naming --svg, nothing printed.
{
    my $d = tempdir(CLEANUP => 1);
    for my $a (["$d/nope/front.svg", qr/its directory '\Q$d\E\/nope' does not exist/],
               ["$d/front.png", qr/it ends in \.png, but the file is SVG \(name it \.svg\)/]) {
        ($c, $o, $e) = run_gp('run', 'scripts/grid_sweep.lua', '--svg', $a->[0]);
        is($c, 1, "grid_sweep --svg $a->[0]: refused");
        like($e, qr/^gpuplan: grid_sweep: --svg: cannot write '\Q$a->[0]\E': /m, 'the option named') or diag $e;
        like($e, $a->[1], 'and why');
        is($o, '', 'before the table');
    }
    ok(!-e "$d/front.png", 'no file written');
}

# 10. A case file's infer row with an unknown framework said "'vlm' is not
# a infer framework".
{
    my $d = tempdir(CLEANUP => 1);
    open(my $in, '<', 'validation/cases.json') or die;
    my $all = JSON::PP::decode_json(do { local $/; <$in> });
    close $in;
    my @cases = ref $all eq 'ARRAY' ? @$all : @{ $all->{cases} };
    my ($case) = grep { $_->{id} eq 'oci-vllm-llama31-405b-mi300x-tp8-fp8-128-128-bs1' } @cases;
    $case->{workload}{framework} = 'vlm';
    open(my $out, '>', "$d/c.json") or die;
    print $out JSON::PP->new->canonical->pretty->encode([$case]);
    close $out;
    ($c, $o, $e) = run_gp('validate', "$d/c.json");
    is($c, 2, 'an unknown framework: a usage error');
    like($e, qr/field 'workload\.framework': 'vlm' is not an infer framework \(/, 'an infer framework') or diag $e;
}

# 11. custom_catalog.lua --dir naming a file (or a device) said "cannot make
# the directory: File exists", as if the directory were there.
{
    my $d = tempdir(CLEANUP => 1);
    open(my $f, '>', "$d/afile") or die; close $f;
    ($c, $o, $e) = run_gp('run', 'scripts/custom_catalog.lua', '--dir', "$d/afile");
    is($c, 1, 'custom_catalog --dir FILE: refused');
    is($e, "gpuplan: custom_catalog: --dir '$d/afile': cannot make the directory: it is a file, not a directory\n",
       'what is there said');
}

# 12. A script's error object whose __tostring itself raises was reported
# with a traceback through gpuplan's own cli.lua ("cli.lua:215: in upvalue
# 'describe'"): errors never name an internal file:line.  Now one line,
# the object's own failure said; one that raises itself does not recurse.
{
    my $d = tempdir(CLEANUP => 1);
    for my $a (['x', 'local t = setmetatable({}, {__tostring = function() error("x") end}) error(t)',
                qr/^gpuplan: \Q$d\E\/x\.lua: error object is a table value whose __tostring failed: \Q$d\E\/x\.lua:1: x$/],
               ['y', 'local t = setmetatable({}, {__tostring = function(self) error(self) end}) error(t)',
                qr/^gpuplan: \Q$d\E\/y\.lua: error object is a table value whose __tostring failed: a table value$/]) {
        open(my $f, '>', "$d/$a->[0].lua") or die;
        print $f $a->[1];
        close $f;
        ($c, $o, $e) = run_gp('run', "$d/$a->[0].lua");
        is($c, 1, "$a->[0].lua: exit 1");
        like($e, $a->[2], "$a->[0].lua: one line, the object's failure") or diag $e;
        unlike($e, qr/cli\.lua|stack traceback/, "$a->[0].lua: no internal file:line");
    }
}

# 13. plan with no layout at all (4096 GPUs and a global batch of 8: no
# split divides them) followed its "no split ... divides" line with memory
# hints priced over no layout: "none of --zero 3, --offload optimizer,
# --gpus 8192, --gpus 16384 fits either (priced)" -- memory is not the
# miss, and more GPUs split the batch worse.  The split alone is said; a
# memory miss keeps its hints.
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '4096', '--global-batch', '8');
is($c, 0, 'plan with no split: an answer, exit 0') or diag $e;
like($o, qr/^no layout: no split of these GPU counts divides/m, 'the split named');
unlike($o, qr/fits either|would fit/, 'no memory hint priced over no layout') or diag $o;
# llama3-70b at 32k on 8 H100s: 90 layouts, none fits (149.2 GiB the nearest)
($c, $o, $e) = run_gp('plan', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'full', '--seq', '32768');
like($o, qr/^would fit \(priced\): --offload optimizer /m, 'a memory miss keeps its priced hints') or diag $o;

# 14. A user catalog's settings { currency = "EUR" } without a rate for
# EUR was refused by every command as "infer: --currency 'EUR': no
# exchange rate in the catalog (CNY, USD)": an option never given, no file
# named.  Now the catalog refuses it at the settings line; with a currency
# {} entry for EUR it prices in euros.
{
    my $d = tempdir(CLEANUP => 1);
    open(my $f, '>', "$d/s.lua") or die;
    print $f qq{settings { currency = "EUR" }\n};
    close $f;
    local $ENV{GPUPLAN_CATALOG} = $d;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm');
    is($c, 1, 'settings currency EUR without a rate: refused');
    like($e, qr{^gpuplan: \Q$d\E/s\.lua:1: settings: field 'currency': no exchange rate in the catalog for EUR}m,
         'the settings file and line named') or diag $e;
    unlike($e, qr/--currency/, 'no option the user never gave');
    open($f, '>>', "$d/s.lua") or die;
    print $f qq{currency { id = "EUR", per_usd = 0.9, date = "2026-01-01", source = "a test" }\n};
    close $f;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm');
    is($c, 0, 'with a rate for EUR: priced') or diag $e;
    like($o, qr/^cost per 1M output tokens\s+[\d.]+ EUR /m, 'in euros');
}

# 15. One name per option: moe_serving.lua took its cards as --gpus, which
# every command reads as a GPU count (--gpus 16: "unknown gpu '16'"), and
# grid_sweep.lua took them as --cards beside --gpus for the counts (--gpu
# h100-sxm: "did you mean '--gpus'?", the counts).  Both now take the
# cards as --gpu A,B,C, as plan and infer do.
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', '--gpu', 'h200-sxm', '--format', 'csv');
is($c, 0, 'moe_serving --gpu h200-sxm runs') or diag $e;
like($o, qr/^"deepseek-v3, [^\n]*",h200-sxm,/m, 'the card priced');
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', '--gpus', '16');
is($c, 2, 'moe_serving --gpus: no such option');
like($e, qr/unknown option '--gpus' \(did you mean '--gpu'\?\)/, 'the card option named');
($c, $o, $e) = run_gp('run', 'scripts/grid_sweep.lua', '--gpu', 'h100-sxm', '--gpus', '64');
is($c, 0, 'grid_sweep --gpu h100-sxm --gpus 64 runs') or diag $e;
like($o, qr/^h100-sxm\s+64\s/m, 'the card and count priced');

# 16. plan --shard K/N without --format json printed "best layouts by
# fastest" of one part of the search, titled as the whole: its best could
# be anything but the search's (merge ranks the whole).  Now a usage error
# naming --format json; 1/1 (the whole search) keeps its text.
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--shard', '1/2');
is($c, 2, 'plan --shard 1/2 in text: a usage error');
like($e, qr/^gpuplan: plan: --shard 1\/2 writes a part of the search for gpuplan merge: give --format json/m,
     'says what a shard is for') or diag $e;
is($o, '', 'nothing searched or printed');
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--shard', '1/2', '--format', 'json');
is($c, 0, '--format json: the shard written') or diag $e;
like($o, qr/^\{.*"shard":"1\/2"/m, 'as merge reads it');
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--shard', '1/1');
is($c, 0, '--shard 1/1, the whole search, in text: answered') or diag $e;

# 17. `gpuplan --versio`: options without a command are the guide's, and
# the slip was matched against the guide's three options alone, naming
# none ("guide: unknown option '--versio'").  It now names the top
# level's --version.
for my $v ('--versio', '--verison') {
    ($c, $o, $e) = run_gp($v);
    is($c, 2, "gpuplan $v: a usage error");
    like($e, qr/^gpuplan: guide: unknown option '\Q$v\E' \(did you mean 'gpuplan --version'\?\)$/m, "$v: --version named");
}
($c, $o, $e) = run_gp('--curency', 'CNY');
like($e, qr/unknown option '--curency' \(did you mean '--currency'\?\)/, "the guide's own option still named");

# 18. infer --offload that does not fit for host memory ("offloading 40 of
# 80 layers needs 68.83 GB of host memory, has 32.00 GB": 40 layers x
# 1.72 GB of Llama 3 70B's bf16 layer) quoted a host memory that is a
# default (32 GB, no --system), and its defaults dropped host_memory=32GB
# with the other offload entries (dropped where the engine placed no
# layer, which a job that does not fit never does).  Now the JSON's
# defaults keep it and the hint says the figure is assumed.
{
    my @j = ('infer', 'llama3-70b', '--gpu', 'h100-sxm', '--offload');
    ($c, $o, $e) = run_gp(@j, '--format', 'json');
    my $r = JSON::PP::decode_json($o);
    ok(!$r->{fits} && $r->{why} =~ /has 32\.00 GB$/, 'refused for host memory, 32 GB');
    ok((grep { $_ eq 'host_memory=32GB' } @{ $r->{defaults} }), 'host_memory=32GB among the defaults')
        or diag explain $r->{defaults};
    ($c, $o, $e) = run_gp(@j);
    like($o, qr/^does not fit: .*more host memory with --host-memory \(the 32\.00 GB is assumed\)$/m,
         'the text says the 32 GB is assumed') or diag $o;
    ($c, $o, $e) = run_gp(@j, '--host-memory', '40GB');
    like($o, qr/has 40\.00 GB; .*with --host-memory$/m, 'a given host memory is not called assumed');
}

# 19. gp.sweep { zero = { "1", "3" } }: the strings passed the list's check
# (math.tointeger takes "1") and reached the engine's binding, which said
# "sweep: sweep.zero[1] must be an integer of at most 32 bits" -- its own
# field, for a value gp.train takes (zero = "1").  Now read as the numbers
# they are: the same search as zero = { 1, 3 }, the caller's list kept.
{
    my $d = tempdir(CLEANUP => 1);
    open(my $f, '>', "$d/z.lua") or die;
    print $f <<'LUA';
local gp = require "gpuplan"
local z = { "1", "3" }
local a = gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = { 8 }, zero = z }
local b = gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = { 8 }, zero = { 1, 3 } }
print(#a.results == #b.results and a.results[1].layout == b.results[1].layout
  and a.results[1].step_s == b.results[1].step_s and "same" or "differ", type(z[1]))
LUA
    close $f;
    ($c, $o, $e) = run_gp('run', "$d/z.lua");
    is($c, 0, 'gp.sweep zero = {"1", "3"}: searched') or diag $e;
    is($o, "same\tstring\n", 'the search of zero = {1, 3}; the caller\'s list as given');
}

# 20. --nic-fabric with a scale-up fabric (nvlink4, pcie5) was priced as
# the network between nodes (llama3-8b on 16 H100s, ZeRO-3: 2.2961 s,
# against ib-ndr-400's 2.2969), where the catalog refuses a system whose
# nic_fabric is not scale-out.  Now a usage error naming the scope and the
# scale-out fabrics, in every command that takes it.
for my $a (['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '3', '--nic-fabric', 'nvlink4'],
           ['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--nic-fabric', 'pcie5'],
           ['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '16', '--nic-fabric', 'pcie4'],
           ['infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '16', '--ep', '16', '--nic-fabric', 'nvlink4']) {
    ($c, $o, $e) = run_gp(@$a);
    is($c, 2, "$a->[0] --nic-fabric $a->[-1]: a usage error");
    like($e, qr/^gpuplan: \Q$a->[0]\E: --nic-fabric '\Q$a->[-1]\E' is a scale-up fabric \(scope scaleup\), not a network between nodes \(scale-out fabrics: [^)]*ib-ndr-400/m,
         "$a->[0]: the scope and the networks named") or diag $e;
}
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '3', '--nic-fabric', 'roce-400');
is($c, 0, 'a scale-out --nic-fabric: priced') or diag $e;

done_testing();
