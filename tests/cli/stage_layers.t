# --stage-layers on the command line: every pipeline stage's layers, a
# comma list (gp.train's stage_layers; tests/lua/stage_layers.t prices
# it).  Llama 3 8B's 32 layers on PP 4: 9,9,8,6 is taken, and the line
# of defaults no longer names a partition rule the split does not
# follow; a list that is not the stages' or not the layers' is refused
# naming the flag, exit 1.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @job = ('llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tp', '2', '--pp', '4',
           '--seq', '4096', '--global-batch', '64', '--stack', 'megatron');

my ($rc, $out) = run_gp('train', @job, '--stage-layers', '9,9,8,6');
is($rc, 0, 'train --stage-layers 9,9,8,6: priced');
# the first stage holds 9 layers and the embedding: the slowest (the
# uniform split's is the last, 8 layers and the 128256 x 4096 head)
# counted from 1 on the command line: the first of 4 is "1 of 4" (it read
# "0 of 4", and the last stage "3 of 4": r.stage is 0-based)
like($out, qr/^pipeline: slowest stage 1 of 4 \(9 layers\)/m, 'the first stage (9 layers) is the slowest');
unlike($out, qr/^defaults: .*partition=/m, 'no partition rule said: the split is the job\'s');
($rc, $out) = run_gp('train', @job);
like($out, qr/^defaults: .*partition=uniform/m, 'without it the uniform rule is said');
like($out, qr/^pipeline: slowest stage 4 of 4 \(8 layers\)/m, 'uniform: the last stage (the head) is "4 of 4"');
# fit's line too: its most loaded stage of the same job (4 x 8 layers)
# is the first, with the embedding: "1 of 4", where it read "0 of 4"
($rc, $out) = run_gp('fit', @job[0..8], '--seq', '4096', '--stack', 'megatron');
like($out, qr/^most loaded pipeline stage: 1 of 4 \(8 layers, the embedding\)$/m,
     'fit: counted from 1, the embedding\'s stage is the first');

my $err;
($rc, $out, $err) = run_gp('train', @job, '--stage-layers', '9,9,8');
is($rc, 1, '3 entries for pp 4: refused');
like($err, qr/--stage-layers has 3 entries for --pp 4/, '... saying so');
($rc, $out, $err) = run_gp('train', @job, '--stage-layers', '9,9,8,x');
is($rc, 1, 'a word among the counts: refused');
like($err, qr/value 4 of --stage-layers must be a whole number of layers >= 1 \(got 'x'\)/,
     '... naming the flag and the entry');
($rc, $out, $err) = run_gp('train', @job, '--stage-layers', '');
is($rc, 1, 'an empty list: refused');
like($err, qr/--stage-layers is empty: give each pipeline stage's layers/, '... saying it is empty');
# One entry past the engine's 128 stages (engine/layout.h
# GP_STAGE_LIST_MAX): refused in those words, before the count of --pp.
($rc, $out, $err) = run_gp('train', @job, '--stage-layers', join(',', (1) x 129));
is($rc, 1, '129 entries: refused');
like($err, qr/--stage-layers: 129 stages, more than the 128 it takes/, '... naming the bound');
($rc, $out) = run_gp('plan', @job[0..4], '--stage-layers', '9,9,8,6');
isnt($rc, 0, 'plan does not search it: refused');

done_testing();
