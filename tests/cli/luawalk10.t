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

# A bad file on the search path, loaded on a script's first gp.comm: the
# error named the script's line in place of the catalog file's (comm
# stripped the file:line of the catalog's error as if it were gpuplan's
# own); gp.train, gp.catalog and the commands named the file.
{
  use File::Temp qw(tempdir);
  my $dir = tempdir(CLEANUP => 1);
  open(my $fh, '>', "$dir/fab.lua") or die;
  print $fh qq{fabric { id = "roce-x", name = "x", scope = "scaleout", kind = "network", bw = "200Gb/s", latency = "3us", achievable = 0.8, achievable_reason = "x", source = "x" }\n};
  close $fh;
  open($fh, '>', "$dir/s.lua") or die;
  print $fh qq{local gp = require "gpuplan"\nlocal r = gp.comm { op = "all_reduce", bytes = 2^20, system = "dgx-h100", gpus = 8 }\n};
  close $fh;
  local $ENV{GPUPLAN_CATALOG} = "$dir/cat";
  mkdir "$dir/cat";
  rename("$dir/fab.lua", "$dir/cat/fab.lua") or die;
  ($c, $o, $e) = run_gp('run', "$dir/s.lua");
  is($c, 1, 'gp.comm on a bad catalog: an error');
  like($e, qr{cat/fab\.lua:1: fabric 'roce-x': field 'bw'}, 'gp.comm: the catalog file\'s line') or diag $e;
  unlike($e, qr{s\.lua:2:}, 'gp.comm: not the script\'s line') or diag $e;
}
done_testing();
