# What a walk as a new user found (a llama.cpp user on an RTX 4090, a
# plan beside train, a long-context fit, a two-node all-reduce): a GGUF
# file priced under CUDA graphs, a llama-server batch no default gives,
# MFU in two formats, a context refusal with no way out, a CSV header
# without its unit, a title that read as sixteen systems.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 4. A context past the model's: the catalog's models of its family and
# shape that hold it are named
($c, $o, $e) = run_gp(qw(fit llama3-70b --gpu h200-sxm --gpus 4 --method infer --seq 32768));
is($c, 1, 'fit --seq past the context: refused');
like($e, qr/exceed llama3-70b's context of 8192 tokens \(max_seq\); llama3\.1-70b, llama3\.3-70b of the same family and shape hold it \(context 131072 or more\)/,
     'llama3.1-70b named');
($c, $o, $e) = run_gp(qw(infer llama3-70b --gpu h200-sxm --gpus 4 --input 30000));
like($e, qr/context of 8192 tokens \(max_seq\); llama3\.1-70b/, 'infer: the same');
($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h200-sxm --method infer --seq 1000000));
like($e, qr/context of 8192 tokens \(max_seq\)$/m, 'none holds a million tokens: nothing named');

done_testing();
