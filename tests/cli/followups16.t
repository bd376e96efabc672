# followups16: user-facing consistency, one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. An unknown option is worded once (gpuplan.args unknown_option) on
# every command, with the nearest option it takes: roofline, catalog,
# validate, model and merge declared no hint and named none.
for my $cmd (qw(fit train plan rl infer comm roofline catalog validate model merge)) {
    ($c, $o, $e) = run_gp($cmd, '--formt', 'csv');
    is($c, 2, "$cmd --formt: a usage error, exit 2");
    like($e, qr/^gpuplan: \Q$cmd\E: unknown option '--formt' \(did you mean '--format'\?\)$/m,
         "$cmd --formt names --format") or diag $e;
}

# 4. A new user's walk.
# train --scaling --format csv dropped the efficiency the text and JSON
# print: now its columns scaling and scaling_base (plan's JSON names).
{
    my @job = qw(train llama3-8b --gpu h100-sxm --gpus 16 --scaling);
    ($c, $o, $e) = run_gp(@job, '--format', 'json');
    is($c, 0, 'train --scaling json: exit 0') or diag $e;
    my ($eff) = $o =~ /"efficiency":([0-9.eE+-]+)/;
    my ($base) = $o =~ /"scaling":\{[^}]*"gpus":(\d+)/;
    ok(defined $eff && defined $base, 'json has the efficiency and its base') or diag $o;
    ($c, $o, $e) = run_gp(@job, '--format', 'csv');
    is($c, 0, 'train --scaling csv: exit 0') or diag $e;
    my @lines = split /\n/, $o;
    my @head = split /,/, $lines[0];
    my %col; @col{@head} = (0 .. $#head);
    ok(exists $col{scaling} && exists $col{scaling_base}, 'csv header has scaling, scaling_base')
        or diag $lines[0];
    my @row = split /,/, $lines[1];
    # the csv prints %.6g of the same number
    is($row[$col{scaling}], sprintf('%.6g', $eff), 'csv scaling is the json efficiency');
    is($row[$col{scaling_base}], $base, 'csv scaling_base is the json base count');
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 16 --format csv));
    unlike((split /\n/, $o)[0], qr/scaling/, 'without --scaling: no scaling columns');
}

# "--global-batch 1M" said only "expects an integer"; --seq 8k named both
# readings: M and G now do too (1 x 1024^2 = 1048576, 1 x 1000^2).
($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --global-batch 1M));
is($c, 2, '--global-batch 1M: a usage error');
like($e, qr/expects an integer, got '1M' \(write the count out: 1048576 for 1 x 1024\^2, 1000000 for 1 x 1000\^2\)/,
     '1M: both readings named') or diag $e;

# Names in either case, as --format CSV and --runtime VLLM are read:
# --method QLoRA, --algo PPO, --recompute Full were refused, exit 2.
for my $t (
    [ [qw(fit llama3-8b --gpu h100-sxm --method QLoRA)], qr/method qlora/ ],
    [ [qw(rl qwen2.5-7b --gpu h100-sxm --gpus 16 --algo PPO)], qr/qwen2\.5-7b PPO on 16/ ],
    [ [qw(train llama3-8b --gpu h100-sxm --gpus 8 --recompute Full)], qr/^recompute\s+\d/m ],
    [ [qw(comm --system dgx-h100 --algo Ring --max 1MB --format csv)], qr/,ring,/ ],
) {
    my ($args, $want) = @$t;
    ($c, $o, $e) = run_gp(@$args);
    is($c, 0, "@$args: exit 0") or diag $e;
    like($o, $want, "@$args: read in lower case") or diag $o;
}

done_testing();
