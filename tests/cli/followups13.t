# Small items last round's reviewers found (followups13): one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. DeepSeek-V3 on 16 H20s: the fp8 deployment's table showed "KV per
# sequence per GPU 2.591 GB" and the bf16 one's refusal "one sequence's
# KV 2.447" -- one quantity, it seemed, moving with the weights.  They are
# two lengths: the table's is a sequence's whole KV (input + output, 2048
# + 256 = 2304 tokens), the refusal's sum the KV admitted at the paged
# policy's mean (input + output / 2 = 2176 tokens): 2.591 x 2176 / 2304 =
# 2.447.  The refusal now says which length it counts.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--ep', '16',
                      '--weights', 'fp8');
is($c, 0, 'deepseek-v3 fp8 on 16 h20: exit 0') or diag $e;
# (followups15: the row now says both figures, one sequence's share and
# the TP16 group's 16 a GPU holds per sequence of its batch: the latter)
my ($full) = $o =~ /^KV per sequence per GPU\s+[\d.]+ GB on each GPU of a TP16 attention group .*; ([\d.]+) GB per sequence of a GPU's batch /m;
ok(defined $full, "the table's KV per sequence: $full") or diag $o;
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--ep', '16',
                      '--weights', 'bf16');
my ($mean) = $o =~ /KV ([\d.]+) for TP16 attention's 16 sequences at in \+ out\/2,/;
ok(defined $mean, 'bf16 weights: the refusal names the KV length it counts') or diag $o;
# the KV is the KV dtype's and the layout's: the same whole-length figure
# scaled by 2176 / 2304, to the 3 printed decimals (0.0005 GB each)
ok(defined $mean && defined $full && abs($mean - $full * 2176 / 2304) < 0.001,
   "bf16 weights' mean $mean = fp8 weights' whole $full x 2176/2304");

# 3. The limits a --target table shows are what the user typed: TTFT's
# column was "%.0f" (--ttft-max 250.5 showed 251 -- 250.5 was a bound the
# plan never had), ITL's "%.1f" (40.25 showed 40.2).  Whole values read as
# before (ITL 50.0, TTFT 250: tests/cli/ttft_max.t).
($c, $o, $e) = run_gp('infer', 'llama3.1-70b', '--gpu', 'h100-sxm', '--input', '4096',
                      '--output', '512', '--target', '20000', '--ttft-max', '250.5',
                      '--itl-max', '40.25');
is($c, 0, '--ttft-max 250.5 --itl-max 40.25: exit 0') or diag $e;
like($o, qr/^\s*20000\s+40\.25\s+\d+\s+TP\d+\s+\d+\s+\d+\s+[\d.]+\s+\d+\s+250\.5\s/m,
     'the ITL limit 40.25 and the TTFT limit 250.5 as typed') or diag $o;
# a duration in seconds: 0.2505 s is 250.49999999999997 ms in binary,
# shown as the user's 250.5
($c, $o, $e) = run_gp('infer', 'llama3.1-70b', '--gpu', 'h100-sxm', '--input', '4096',
                      '--output', '512', '--target', '20000', '--ttft-max', '0.2505s');
like($o, qr/^\s*20000\s+50\.0\s+\d+\s+TP\d+\s+\d+\s+\d+\s+[\d.]+\s+\d+\s+250\.5\s/m,
     '--ttft-max 0.2505s: 250.5') or diag $o;

# 4. A --price id of another card than --gpu that no catalog entry holds
# (--gpu h100-sxm --price a100-sxm-80gb/lambda/us) listed the A100's offers,
# as if the A100 were to be priced; it now names both cards, as an existing
# offer of another card is refused, and lists the priced card's offers.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--price',
                      'a100-sxm-80gb/lambda/us');
is($c, 1, 'another card\'s unknown offer: exit 1 (an unknown catalog id)');
like($e, qr/^gpuplan: train: --price 'a100-sxm-80gb\/lambda\/us' is no catalog offer, and it names a100-sxm-80gb, not h100-sxm \(the offers for h100-sxm: h100-sxm\/\S+/m,
     'names both cards and lists the H100\'s offers') or diag $e;
unlike($e, qr/a100-sxm-80gb\/hyperscaler/, 'not the A100\'s');
# the card's own unknown offer lists its offers, as before
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--price',
                      'a100-sxm-80gb/lambda/us');
like($e, qr/is no catalog offer \(the offers for a100-sxm-80gb: a100-sxm-80gb\//,
     'its own card: that card\'s offers') or diag $e;

# 5. "groups of 1 GPUs": the noun agrees with the count (the refusal's
# text is tests/cli/newuser9.t's; here the plan's title)
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1',
                      '--zero-group', '1');
like($o, qr/zero 1 in groups of 1 rank\)/, 'a group of 1: "1 rank"') or diag $o;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1',
                      '--zero-group', '2');
like($o, qr/zero 1 in groups of 2 ranks\)/, 'a group of 2: "2 ranks"') or diag $o;

# 6. A job that does not fit says what would, each option priced as the
# job was (report.fit_hints), and each claim is checked here by running
# the command with that option.
# (a) plan: a 70B full fine-tune on 8 H100s searched ZeRO-1 alone and said
# only that nothing fits.
{
    my @job = ('plan', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'full');
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'plan 70B full on 8 H100: exit 0') or diag $e;
    like($o, qr/^no layout fits /m, 'nothing fits');
    my ($line) = $o =~ /^(would fit \(priced\): .*)$/m;
    ok(defined $line, 'a line of what would fit') or diag $o;
    $line //= '';
    # every option the line says fits, run: its best layout as said
    my @said = $line =~ /(--[\w-]+ \w+) \(its best h100-sxm x (\d+) (.*?), ([\d.]+) GiB\/GPU\)/g;
    ok(@said >= 4, 'at least one option with its best layout') or diag $line;
    while (my ($opt, $n, $lay, $gib) = splice @said, 0, 4) {
        my ($c2, $o2) = run_gp(@job, split(/ /, $opt));
        my ($best) = $o2 =~ /^(h100-sxm .*)$/m;
        like($best // '', qr/^h100-sxm\s+\Q$n\E\s+\Q$lay\E\s.*\s\Q$gib\E\s*$/,
             "$opt: fits, its best $lay at $gib GiB") or diag $o2;
    }
    # and the ones it says do not: ZeRO-3 (16 B a parameter over 8 GPUs
    # is 140 GB of states alone)
    like($line, qr/; not --zero 3\b/, 'ZeRO-3 named as not fitting either');
    my ($c3, $o3) = run_gp(@job, '--zero', '3');
    like($o3, qr/^no layout fits /m, '--zero 3: indeed nothing fits');
    # csv: the same on stderr, the table a header alone
    ($c, $o, $e) = run_gp(@job, '--format', 'csv');
    like($e, qr/^gpuplan: note: plan: would fit \(priced\): /m, 'csv: the hint is a note on stderr');
    # something fits: no such line
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8');
    unlike($o, qr/would fit/, 'a plan that fits: no hint');
}
# (b) rl at --zero 0 holds the whole model's states a GPU (8B on 8 H100s:
# 153 GiB); the stages above are priced and the smallest that fits named.
# (rl's own default is now the stack's ZeRO-3, which fits: 0 is given.)
{
    my @job = ('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '0');
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'rl 8B on 8 H100: exit 0') or diag $e;
    my ($z, $peak) = $o =~ /^would fit \(priced\): --zero (\d) \(peak ([\d.]+) GiB per GPU\)/m;
    ok(defined $z, "rl names --zero $z") or diag $o;
    my ($c2, $o2) = run_gp(@job, '--zero', $z // 3);
    like($o2, qr/^memory: peak \Q@{[$peak \/\/ '']}\E GiB of [\d.]+ GiB per GPU; fits: yes/m,
         "--zero $z: fits at the peak said") or diag $o2;
    for my $lower (1 .. ($z // 1) - 1) {
        like($o, qr/not .*--zero $lower\b/, "--zero $lower said not to fit");
        my ($c3, $o3) = run_gp(@job, '--zero', $lower);
        like($o3, qr/fits: no/, "--zero $lower: indeed no");
    }
}
# (c) a MoE deployment that does not fit (DeepSeek-V3 bf16 on 16 H20s):
# the assumed line, as a fitting one prints, and 8-bit weights priced.
{
    my @job = ('infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--ep', '16', '--weights', 'bf16');
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'deepseek-v3 bf16 on 16 h20: exit 0') or diag $e;
    like($o, qr/^does not fit: decode: /m, 'does not fit');
    like($o, qr/^assumed: kv=bf16, kv policy: mean, input=2048, output=256, /m, 'the assumed line');
    my ($b) = $o =~ /^would fit \(priced\): --weights fp8 \(batch (\d+) per GPU, \d+ tokens\/s per GPU\)/m;
    ok(defined $b, 'names --weights fp8 with its batch') or diag $o;
    my ($c2, $o2) = run_gp(@job, '--weights', 'fp8');
    like($o2, qr/^batch per GPU\s+\Q@{[$b \/\/ '']}\E \(KV holds/m, "--weights fp8: batch $b a GPU")
        or diag $o2;
}

# 7. The completion offers every command `gpuplan --help` lists: it is
# made from cli.COMMANDS (gpuplan.docgen), the help from that list plus
# the rows help_text writes itself ("run"); a command added to the help
# alone (a "guide" row) was not completed.  The first word's completions
# against the help's commands, one by one.
{
    ($c, $o, $e) = run_gp('--help');
    my ($block) = $o =~ /^commands:\n(.*?)\n\n/ms;
    my @cmds = map { /^  (\S+)/ ? $1 : () } split /\n/, $block // '';
    ok(@cmds >= 12, scalar(@cmds) . ' commands in the help') or diag $o;
    my $script = '. completion/gpuplan.bash; COMP_WORDS=(gpuplan ""); COMP_CWORD=1; '
               . '_gpuplan; printf "%s\n" "${COMPREPLY[@]}"';
    open my $ph, '-|', 'bash', '-c', $script or die "bash: $!";
    my %offered = map { chomp; ($_ => 1) } <$ph>;
    close $ph;
    my @missing = grep { !$offered{$_} } @cmds;
    is("@missing", '', 'the completion offers each command of the help');
}

# 8. fit --method infer takes --kv-free-fraction, as gp.memory takes the
# key (one declaration: its CLI flag, Lua key and help): the KV pool is F
# of the memory free once the model is loaded (TensorRT-LLM's
# free_gpu_memory_fraction), so the budget is capacity - (1 - F) x
# (capacity - what is placed without the KV), read back from the table
# itself: capacity 84.93, placed 18.80 - 1.07 = 17.73 GB (weights,
# workspace and the reserve), 84.93 - 0.1 x 67.20 = 78.21 (two decimals
# printed: 0.02 GB).
{
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer',
                          '--kv-free-fraction', '0.9');
    is($c, 0, 'fit --method infer --kv-free-fraction 0.9: exit 0') or diag $e;
    my %gb = map { /^(\w+)\s+[\d.]+\s+([\d.]+)/ ? ($1 => $2) : () } split /\n/, $o;
    my $want = defined $gb{capacity} && defined $gb{total} && defined $gb{kv_cache}
        ? $gb{capacity} - 0.1 * ($gb{capacity} - ($gb{total} - $gb{kv_cache})) : undef;
    ok(defined $want && defined $gb{budget} && abs($gb{budget} - $want) < 0.02,
       "budget $gb{budget} GB = capacity - 0.1 of the free memory") or diag $o;
    like($o, qr/^budget .*\(0\.1 of the memory free after the model, --kv-free-fraction 0\.9\)$/m,
         'the budget row names the rule');
    my ($c2, $o2) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer');
    my ($b2) = $o2 =~ /^budget\s+[\d.]+\s+([\d.]+)/m;
    ok(defined $b2 && $b2 != $gb{budget}, 'without it the margin rule gives another budget');
    # the refusals of the declaration: a training method, with --margin,
    # out of range
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--kv-free-fraction', '0.9');
    is($c, 2, 'a training fit: exit 2');
    like($e, qr/^gpuplan: fit: --kv-free-fraction applies to --method infer$/m, '... says so');
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer',
                          '--kv-free-fraction', '0.9', '--margin', '0.1');
    is($c, 2, 'with --margin: exit 2');
    like($e, qr/--margin and --kv-free-fraction are two rules for the KV pool/, '... says so');
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer',
                          '--kv-free-fraction', '1.5');
    is($c, 1, '1.5: out of range, exit 1');
    like($e, qr/--kv-free-fraction must be a number in \(0, 1\] \(got 1\.5\)/, '... names the flag');
}

done_testing();
