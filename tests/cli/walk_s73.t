# A new user's first hour (session 73's walk): the README's commands, then
# train, plan, infer, validate with a case file of one's own.  One block a
# fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);
local $ENV{XDG_CONFIG_HOME} = '/nonexistent';
delete @ENV{qw(GPUPLAN_CURRENCY GPUPLAN_MARKET)};

# 1. train without --tokens (nor --price, --currency, --market) prices one
# step and no run: no days, no cost.  Its defaults line still said
# "market=us,global,overseas (a USD buyer), price=1.80 USD/GPU-h (...)", and
# on a card with no offer there "price=none: no offer for h800-sxm ...":
# assumptions the answer did not rest on.  Now they are said where the
# answer uses them: with --tokens (days and cost) or a price, currency or
# market given (the cost of an hour and of a step).
{
    my @job = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1');
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'train without --tokens: exit 0') or diag $e;
    my ($d) = $o =~ /^defaults: (.*)$/m;
    ok(defined $d, 'train: a defaults line');
    unlike($d // '', qr/(?:^|, )(?:market|price)=/, 'train without --tokens: no market or price assumed');
    unlike($o, qr/^(?:cost|time to train)/m, 'train without --tokens: no cost line');
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h800-sxm', '--gpus', '8', '--zero', '1');
    is($c, 0, 'train h800 without --tokens: exit 0') or diag $e;
    unlike($o, qr/price=none/, 'train h800 without --tokens: no "price=none" for a run not costed');
    ($c, $o, $e) = run_gp(@job, '--tokens', '1e9');
    is($c, 0, 'train --tokens: exit 0') or diag $e;
    like($o, qr/^time to train .*; cost /m, 'train --tokens: the cost line');
    like($o, qr/^defaults: .*market=us,global,overseas \(a USD buyer\).*price=[\d.]+ USD\/GPU-h/m,
         'train --tokens: market and price assumed, said');
    ($c, $o, $e) = run_gp(@job, '--currency', 'USD');
    is($c, 0, 'train --currency: exit 0') or diag $e;
    like($o, qr/^cost: [\d.]+ USD\/GPU-h x 8 GPUs/m, 'train --currency: the cost of an hour');
    like($o, qr/^defaults: .*price=[\d.]+ USD\/GPU-h/m, 'train --currency: the price it used, said');
}

# 2. plan without --tokens, ranked by time (the default policy): no days,
# no cost, no budget, so no price moves the ranking, yet the defaults line
# said the market and each card's price ("h800-sxm: price=none: no offer
# ..."), as train did (1).  Said where a price is read: --tokens, a budget,
# --policy cheapest or best-per-dollar (which ranks by price without
# tokens).
{
    my @job = ('plan', 'llama3-8b', '--gpu', 'h100-sxm,h800-sxm', '--gpus', '8', '--top', '1');
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'plan without --tokens: exit 0') or diag $e;
    my ($d) = $o =~ /^defaults: (.*)$/m;
    unlike($d // '', qr/market=|price=/, 'plan by time without --tokens: no market or price assumed');
    like($d // '', qr/h100-sxm: system=dgx-h100/, 'plan: each card\'s system still said');
    ($c, $o, $e) = run_gp(@job, '--policy', 'best-per-dollar');
    is($c, 0, 'plan --policy best-per-dollar: exit 0') or diag $e;
    like($o, qr/^defaults: .*h100-sxm: price=[\d.]+ USD\/GPU-h.*h800-sxm: price=none/m,
         'plan best-per-dollar: each card\'s price, which ranks them, said');
}

# 3. validate with a case file of one's own (validation/SCHEMA.md): the
# defaults column of an infer (and rl) row listed "market=us,global,overseas
# (a USD buyer); price=1.80 USD/GPU-h ..." -- the planners' cost line's
# assumptions -- though no case metric is a cost.  Now the column holds
# what the prediction rested on only.
{
    ($c, $o, $e) = run_gp('validate', 'tests/fixtures/validate_s73/infer_case.json',
                          '--format', 'csv');
    is($c, 0, 'validate a user infer case: exit 0') or diag $e;
    my ($row) = grep { /^walk-s73-/ } split /\n/, $o;
    ok(defined $row, 'validate: the case has a row');
    like($row // '', qr/\bkv_policy=mean;/, 'validate: the defaults it rested on are said');
    unlike($row // '', qr/market=|price=/, 'validate: no market or price among its defaults');
}

# 4. plan --help promised "BASE-pareto.svg ..., BASE-memory.svg ... and
# BASE-step.svg; with --per-card BASE-cards.svg", which reads as all four
# with --per-card; --per-card writes BASE-cards.svg alone.  The help now
# says so, and the files written are checked against it.
{
    ($c, $o, $e) = run_gp('plan', '--help');
    like($o =~ s/\s+/ /gr, qr/with --per-card BASE-cards\.svg alone instead/,
         'plan --help: --per-card writes the cards chart instead of the three');
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--top', '1',
                          '--per-card', '--svg', "$dir/p");
    is($c, 0, 'plan --per-card --svg: exit 0') or diag $e;
    ok(-s "$dir/p-cards.svg", 'plan --per-card --svg: BASE-cards.svg written');
    ok(!-e "$dir/p-pareto.svg" && !-e "$dir/p-memory.svg" && !-e "$dir/p-step.svg",
       'plan --per-card --svg: none of the three, as the help now says');
}

# 5. infer --vllm-version with no release in it ('abc', 'nan', '0.6')
# and no --sampling was told "--vllm-version abc says whose sampler runs
# sampling, which is greedy: give sampling ...", as if it named a release;
# with --sampling the same value was refused as no counted release.  Now
# the value is refused first, in the words the sampling path uses.
{
    for my $v ('abc', 'nan', '0.6') {
        ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--vllm-version', $v);
        is($c, 2, "infer --vllm-version $v: a usage error");
        like($e, qr/--vllm-version \Q$v\E: the V0 sampler's kernels are counted for releases 0\.4\.2 to 0\.6\.3 only \(X\.Y\.Z\)/,
             "infer --vllm-version $v: no release, said as such");
    }
    # a release alone is still told what it is for
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--vllm-version', '0.6.3');
    like($e, qr/--vllm-version 0\.6\.3 says whose sampler runs sampling, which is greedy/,
         'infer --vllm-version 0.6.3 alone: the greedy refusal, as before');
}

done_testing();
