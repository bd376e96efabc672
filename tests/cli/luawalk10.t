# The command line's side of tests/lua/luawalk10.t: a job that names its
# node (--system) and not its card takes the system's card (a catalog
# system holds one kind of GPU), as gp.train{system = ...} does.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);
for my $cmd (['train', 'llama2-7b', '--gpus', '8'], ['fit', 'llama2-7b'],
             ['infer', 'llama2-7b'], ['plan', 'llama2-7b', '--gpus', '8'],
             ['rl', 'llama2-7b']) {
  ($c, $o, $e) = run_gp(@$cmd, '--system', 'dgx-h100');
  unlike($e, qr/--gpu ID.* is required/, "$cmd->[0] --system: the system's card") or diag $e;
}
# with --gpu too: the same output
my ($c1, $o1) = run_gp('train', 'llama2-7b', '--gpus', '8', '--system', 'dgx-h100');
my ($c2, $o2) = run_gp('train', 'llama2-7b', '--gpus', '8', '--system', 'dgx-h100', '--gpu', 'h100-sxm');
is($o1, $o2, 'train --system alone prices as with --gpu h100-sxm');
# neither: still required
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpus', '8');
is($c, 2, 'train without --gpu or --system: a usage error');
like($e, qr/--gpu ID is required/, 'train: --gpu ID is required');
done_testing();
