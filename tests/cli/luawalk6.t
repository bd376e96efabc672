# What the sixth Lua walk found in `gpuplan run` itself: an error a
# script's own call raised inside one of Lua's C functions named no line.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. `for _, r in ipairs(res.rows)` with res.rows nil (a misspelt result
# field) failed as "gpuplan: attempt to index a nil value": the error is
# raised in ipairs' iterator, a C function, so Lua gives it no position.
# The script's line that called it now opens the message, with the
# traceback a script's bug gets.  error("msg", 0) keeps its bare message.
{
    write_file("$dir/ip.lua", "local t = {}\nfor _ in ipairs(t.rows) do end\n");
    ($c, $o, $e) = run_gp('run', "$dir/ip.lua");
    is($c, 1, 'ipairs(nil): exit 1');
    like($e, qr{^gpuplan: \Q$dir\E/ip\.lua:2: attempt to index a nil value}m,
         'ipairs(nil): the script line named') or diag $e;
    write_file("$dir/z.lua", "error('plain words', 0)\n");
    ($c, $o, $e) = run_gp('run', "$dir/z.lua");
    is($e, "gpuplan: plain words\n", 'error(msg, 0): bare, as before');
}

# 2. --margin's default named "infer --runtime exllamav2: 0" in the help of
# fit, train, plan and rl (and gp.memory's, gp.train's ... Lua tables),
# which take no runtime: said by infer alone.
{
    for my $cmd (qw(fit train plan rl)) {
        ($c, $o, $e) = run_gp($cmd, '--help');
        my ($m) = $o =~ /(--margin F.*?)\n  --/s;
        unlike($m // '', qr/exllamav2/, "$cmd --help: margin's default names no runtime");
    }
    ($c, $o, $e) = run_gp('infer', '--help');
    my ($m) = $o =~ /(--margin F.*?)\n  --/s;
    like($m // '', qr/--runtime\s+exllamav2\s+or\s+llama\.cpp: 0, --runtime trtllm/, "infer --help: margin's runtime defaults (ExLlamaV2, llama.cpp, TensorRT-LLM)");
}

done_testing();
