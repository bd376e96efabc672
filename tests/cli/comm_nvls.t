# comm --nvls (NCCL_NVLS_ENABLE) beside --algo: the messages name the
# flag the user typed, and a contradiction of the two is a usage error.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# --nvls off with --algo nvls contradict each other: exit 2, both flags
# named (the rule is gp.comm's alone; the command had its own copy).
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--nvls', 'off', '--algo', 'nvls');
is($c, 2, '--nvls off --algo nvls: a usage error');
like($e, qr/^gpuplan: comm: --algo nvls needs NVLS, which --nvls off disables \(NCCL_NVLS_ENABLE=0\)$/m,
     '... naming --algo nvls and --nvls off') or diag $e;

# --algo nvls on a node without NVLink SHARP (A100's NVSwitch): the
# reason is the algorithm's.  With the nvls option declared, the engine's
# bare "nvls needs ..." read "--nvls needs ...", a flag the user never gave.
($c, $o, $e) = run_gp('comm', '--gpu', 'a100-sxm-80gb', '--algo', 'nvls');
is($c, 1, '--algo nvls on A100: refused');
like($e, qr/^gpuplan: comm: --algo nvls needs an NVLink switch with in-switch reduction/m,
     '... the reason names --algo nvls, not --nvls') or diag $e;
unlike($e, qr/comm: --nvls needs/, '... and not the --nvls setting');

# --algo sharp on one node: named once, as --algo sharp.
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--algo', 'sharp');
is($c, 1, '--algo sharp on one node: refused');
like($e, qr/^gpuplan: comm: --algo sharp needs >= 2 nodes/m, '... named once, as --algo sharp')
  or diag $e;

done_testing();
