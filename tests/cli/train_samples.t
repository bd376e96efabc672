# gpuplan train --samples / --epochs / --sample-tokens: the run's tokens as
# a fine-tuning recipe states them (a dataset and its epochs), one
# declaration (gpuplan.options) for the flag, the Lua key, the help and the
# defaults line; --tokens with them is refused.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @job = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora');
# 50000 x 2048 (seq) x 3 = 3.072e8 tokens: the same run as --tokens 307200000
my ($c, $o, $e) = run_gp(@job, '--samples', '50000', '--epochs', '3');
is($c, 0, '--samples 50000 --epochs 3: exit 0') or diag $e;
like($o, qr/^time to train 3\.07e\+08 tokens: /m, 'the run is 3.07e8 tokens');
like($o, qr/tokens=3\.072e\+08 \(--samples 50000 x 2048 \(seq: each sample a whole sequence\) x --epochs 3\)/,
     'the defaults line says how');
my ($line) = $o =~ /^(time to train .*)$/m;
my ($c2, $o2) = run_gp(@job, '--tokens', '307200000');
my ($line2) = $o2 =~ /^(time to train .*)$/m;
is($line, $line2, 'the same time and cost as --tokens 307200000');
# a mean length: 50000 x 700 x 0.5 = 1.75e7
($c, $o, $e) = run_gp(@job, '--samples', '50000', '--epochs', '0.5', '--sample-tokens', '700');
like($o, qr/tokens=1\.75e\+07 \(--samples 50000 x 700 tokens a sample x --epochs 0\.5\)/, '--sample-tokens and half an epoch');
($c, $o, $e) = run_gp(@job, '--samples', '50000', '--tokens', '1B');
is($c, 2, '--samples with --tokens: a usage error');
like($e, qr/^gpuplan: train: --tokens 1B and --samples 50000 both set the run's tokens/m, 'names both');
($c, $o, $e) = run_gp(@job, '--epochs', '2');
is($c, 2, '--epochs without --samples: a usage error');
like($e, qr/^gpuplan: train: --epochs 2 counts over the dataset's samples: give --samples N with it/m, 'says what to give');
($c, $o, $e) = run_gp('train', '--help');
like($o, qr/^  --samples N\s+training samples in the dataset/m, '--help lists --samples');
like($o, qr/^  --epochs E\s+passes over the --samples/m, '--help lists train\'s --epochs');
done_testing();
