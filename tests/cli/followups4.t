# Hardening follow-ups left by the day's walks (newuser6, luawalk3,
# review54): a refusal that did not name the flag the user gave, or two
# commands answering the same misuse differently.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);
my @train = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8');

# 1. A bad --order was refused as "rank order 'x': ..." (the engine's
# words), naming no flag.  Each of the three refusals names --order.
for my $case (['x', qr/--order 'x': unknown dimension 'x'/],
              ['tp-tp-dp-pp-cp', qr/--order 'tp-tp-dp-pp-cp' names tp twice/],
              ['tp-dp', qr/--order 'tp-dp' must name each of tp, cp, dp and pp once/]) {
    ($c, $o, $e) = run_gp(@train, '--order', $case->[0]);
    is($c, 1, "--order $case->[0]: refused (exit 1, an error in a value)");
    like($e, $case->[1], "--order $case->[0]: the refusal names --order");
}

# 2. comm --min 3 priced an all_reduce of count 0 (3 bytes of 4-byte
# floats: no data at all) at the launch latency.  The smallest message
# is one float; 4 bytes is taken and is count 1.
{
    my @comm = ('comm', '--system', 'dgx-h100');
    ($c, $o, $e) = run_gp(@comm, '--min', '3', '--max', '3');
    is($c, 2, "comm --min 3: a usage error, as --min 0 was");
    like($e, qr/--min 3 is below 4 bytes, one 4-byte float/, "... naming --min and the floor");
    ($c, $o, $e) = run_gp(@comm, '--min', '4', '--max', '4');
    is($c, 0, "comm --min 4 runs");
    like($o, qr/^\s+4\s+1\s/m, "... a row of 4 B, count 1");
}

# 3. --deadline 6mo said "expected a duration like 30d, 12h or 2w" and
# not which units are taken: now it lists them and says months and years
# are not among them.
{
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--tokens', '1e9', '--deadline', '6mo');
    isnt($c, 0, "--deadline 6mo: refused");
    like($e, qr/--deadline '6mo': expected a duration like 30d, 12h or 2w \(a number and one unit: s, m, h, d or w; no months or years: half a year is 26w\)/,
         "... listing the units taken");
}

# 4. infer's "needs" refusals exited 2 (a usage error, infer's rule: an
# option the chosen mode does not read) for --host-memory without
# --offload, but 1 for --offload-layers without --offload and for the
# prefill pool's options without --disagg (gp.infer's own refusals).
# Each is now the command's usage error, with its usage line.
{
    my @infer = ('infer', 'llama3-8b', '--gpu', 'h100-sxm');
    for my $case (['--host-memory', '1TB', '--offload'], ['--offload-layers', '3', '--offload'],
                  ['--prefill-gpus', '2', '--disagg'], ['--prefill-tp', '2', '--disagg'],
                  ['--prefill-ep', '2', '--disagg'], ['--prefill-dp-attention', undef, '--disagg']) {
        my ($flag, $v, $need) = @$case;
        ($c, $o, $e) = run_gp(@infer, $flag, defined $v ? ($v) : ());
        is($c, 2, "infer $flag without $need: exit 2");
        like($e, qr/^gpuplan: infer: \Q$flag\E needs \Q$need\E/m, "... naming both flags");
        like($e, qr/^usage: gpuplan infer /m, "... with the usage line");
    }
    # given with the mode, each is taken (the test can fail)
    ($c, $o, $e) = run_gp(@infer, '--disagg', '--gpus', '4', '--prefill-gpus', '2');
    is($c, 0, "--prefill-gpus with --disagg runs") or diag $e;
}

done_testing();
