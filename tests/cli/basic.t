# The executable: help, version, exit codes, scripts, error messages.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my ($c, $o, $e) = run_gp('--version');
is($c, 0, '--version exits 0');
like($o, qr/^gpuplan \d+\.\d+\.\d+$/m, '--version prints the version');

($c, $o, $e) = run_gp('--help');
is($c, 0, '--help exits 0');
like($o, qr/usage: gpuplan/, '--help prints usage');
like($o, qr/catalog\s+list, show and check/, '--help lists commands with summaries');

($c, $o, $e) = run_gp('frobnicate');
is($c, 2, 'unknown command exits 2');
like($e, qr/^gpuplan: unknown command 'frobnicate'/, 'unknown command named');

($c, $o, $e) = run_gp('catalog', '--bogus');
is($c, 2, 'unknown option exits 2');
like($e, qr/catalog: unknown option '--bogus'/, 'unknown option named');

# A usage error is the error, the command's usage lines and where its help
# is -- not the whole help (train's is over 100 lines).
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--sequence-len', '4096');
is($c, 2, 'train: an unknown option exits 2');
is($e, "gpuplan: train: unknown option '--sequence-len' (did you mean '--seq'?)\n"
     . "usage: gpuplan train MODEL --gpu ID --gpus N [options]\n"
     . "see 'gpuplan train --help'\n", 'train: the error, the usage line, where the help is');
is($o, '', 'train: nothing on stdout');
($c, $o, $e) = run_gp('catalog', 'show');
is($c, 2, 'catalog show without an ID exits 2');
is((split /\n/, $e)[-1], "see 'gpuplan catalog --help'", 'catalog: the usage lines, then the pointer');
like($e, qr/^usage: gpuplan catalog list .*\n\s+gpuplan catalog show ID/m, 'catalog: every usage line');
ok(scalar(split /\n/, $e) <= 8, 'catalog: a few lines, not the help');

($c, $o, $e) = run_gp('catalog', 'list', '--format', 'xml');
is($c, 2, 'bad --format exits 2');
like($e, qr/--format' expects text, markdown, csv or json, got 'xml'/, 'bad format value quoted');

($c, $o, $e) = run_gp('run');
is($c, 2, 'run without a script exits 2');

($c, $o, $e) = run_gp('run', 'no/such/script.lua');
is($c, 1, 'missing script exits 1');
like($e, qr/^gpuplan: cannot open script 'no\/such\/script.lua'/, 'missing script named');

my $dir = tempdir(CLEANUP => 1);
# A run-time error inside a script's policy or where function names the
# script's line where it happened (issue 24.5: it said "sweep: attempt to
# compare nil with number" at the gp.sweep call), also under GPUPLAN_DEBUG.
write_file("$dir/policy.lua", <<'LUA');
local gp = require "gpuplan"
gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, tokens = 1e10,
  policy = function(c)
    return c.no_such_field < 3 and c.cost or nil
  end }
LUA
write_file("$dir/where.lua", <<'LUA');
local gp = require "gpuplan"
gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8,
  where = function(c)
    local x = c.nothing
    return x.y
  end }
LUA
for my $debug (0, 1) {
    local $ENV{GPUPLAN_DEBUG} = $debug ? 1 : undef;
    delete $ENV{GPUPLAN_DEBUG} unless $debug;
    my $with = $debug ? ' (GPUPLAN_DEBUG=1)' : '';
    ($c, $o, $e) = run_gp('run', "$dir/policy.lua");
    is($c, 1, "a failing policy exits 1$with");
    like((split /\n/, $e)[0], qr/^gpuplan: \Q$dir\E\/policy\.lua:2: sweep: error in the policy function: \Q$dir\E\/policy\.lua:4: attempt to compare nil with number$/,
         "the policy's own line (4) and the call's (2)$with");
    ($c, $o, $e) = run_gp('run', "$dir/where.lua");
    like((split /\n/, $e)[0], qr/^gpuplan: \Q$dir\E\/where\.lua:2: sweep: error in the where function: \Q$dir\E\/where\.lua:5: attempt to index a nil value \(local 'x'\)$/,
         "the where function's own line (5)$with");
}
write_file("$dir/raise.lua", "local x = 1\nerror('boom')\n");
($c, $o, $e) = run_gp('run', "$dir/raise.lua");
is($c, 1, 'script that raises exits 1');
like($e, qr/^gpuplan: \Q$dir\E\/raise.lua:2: boom$/m, 'one-line message names file:line');
like($e, qr/stack traceback/, 'traceback follows');
like($e, qr/^\t\Q$dir\E\/raise.lua:2: in main chunk$/m, 'through the script\'s own line');
unlike($e, qr/xpcall|cli\.lua/, 'and not through the runner (gpuplan\'s own frames)');
{
    local $ENV{GPUPLAN_DEBUG} = 1;
    ($c, $o, $e) = run_gp('run', "$dir/raise.lua");
    like($e, qr/cli\.lua:\d+: in function 'gpuplan\.cli\.run_script'/,
         'GPUPLAN_DEBUG keeps the whole traceback');
}

write_file("$dir/args.lua", "#!/usr/bin/env gpuplan\nprint(arg[0], arg[1], arg[2], select('#', ...))\nreturn 0\n");
($c, $o, $e) = run_gp('run', "$dir/args.lua", 'a', 'b c');
is($c, 0, 'script with a shebang line runs');
is($o, "$dir/args.lua\ta\tb c\t2\n", 'script gets arg and ...');

($c, $o, $e) = run_gp("$dir/args.lua", 'x');
is($c, 0, 'a script path as the command (shebang use)');

write_file("$dir/exit3.lua", "return 3\n");
($c, $o, $e) = run_gp('run', "$dir/exit3.lua");
is($c, 3, 'a script\'s integer return value is the exit code');

write_file("$dir/syntax.lua", "local = 1\n");
($c, $o, $e) = run_gp('run', "$dir/syntax.lua");
is($c, 1, 'script syntax error exits 1');
like($e, qr/syntax.lua:1:/, 'syntax error names file:line');

# help COMMAND: the command's own usage; an unknown one is a usage error.
($c, $o, $e) = run_gp('help', 'catalog');
is($c, 0, 'help catalog exits 0');
like($o, qr/^usage: gpuplan catalog list/, 'help catalog prints its usage');
($c, $o, $e) = run_gp('help', 'run');
is($c, 0, 'help run exits 0');
like($o, qr/^usage: gpuplan run FILE.lua/, 'help run prints the run usage');
($c, $o, $e) = run_gp('help', 'frobnicate');
is($c, 2, 'help of an unknown command exits 2');
like($e, qr/^gpuplan: unknown command 'frobnicate'/, 'and names it');

# An empty --key= value is refused, whatever the type.
($c, $o, $e) = run_gp('catalog', 'list', '--format=');
is($c, 2, '--format= exits 2');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', '--kind=');
is($c, 2, 'an empty string option exits 2');
like($e, qr/^gpuplan: validate: option '--kind' needs a value$/m, 'empty value named');
# A value left out before another option: that option is not the value.
# Before, "validate --explain --kind train" took --kind as the case id and
# then said "cannot open case file 'train'"; "train --gpu --gpus 8" said
# "expected one MODEL id".  --name=--x still gives the value as written.
($c, $o, $e) = run_gp('validate', '--explain', '--kind', 'train');
is($c, 2, 'a value left out before an option exits 2');
like($e, qr/^gpuplan: validate: option '--explain' needs a value \(got the option '--kind'\)$/m,
     'and names both options');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', '--gpus', '8');
like($e, qr/^gpuplan: train: option '--gpu' needs a value \(got the option '--gpus'\)$/m,
     'train: the same');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu=--gpus', '--gpus', '8');
like($e, qr/unknown gpu '--gpus'/, '--gpu=--gpus is a value');
# After --, everything is an argument.
($c, $o, $e) = run_gp('catalog', 'show', '--', '--explain');
is($c, 1, 'an option-like argument after -- is an argument');
like($e, qr/unknown id '--explain'/, 'and is used as the id');

# Scripts: error values that are not strings, messages without a position,
# os.exit, exit codes out of range, a directory, output order.
write_file("$dir/errtable.lua", "error({ code = 3 })\n");
($c, $o, $e) = run_gp('run', "$dir/errtable.lua");
is($c, 1, 'a table error exits 1');
like($e, qr/^gpuplan: \Q$dir\E\/errtable.lua: error object is a table value$/m, 'table error described');
write_file("$dir/errnil.lua", "error()\n");
($c, $o, $e) = run_gp('run', "$dir/errnil.lua");
is($c, 1, 'error() exits 1');
like($e, qr/^gpuplan: \Q$dir\E\/errnil.lua: error object is a nil value$/m, 'nil error described');
write_file("$dir/errstr.lua", "error(setmetatable({}, { __tostring = function() return 'custom' end }))\n");
($c, $o, $e) = run_gp('run', "$dir/errstr.lua");
like($e, qr/^gpuplan: \Q$dir\E\/errstr.lua: custom$/m, 'an error object with __tostring prints with it');
write_file("$dir/usermsg.lua", "io.write('partial\\n')\nerror('unknown gpu \\'x\\'', 0)\n");
($c, $o, $e) = run_gp('run', "$dir/usermsg.lua");
is($c, 1, 'a message without position exits 1');
is($e, "gpuplan: unknown gpu 'x'\n", 'one line, no traceback');
is($o, "partial\n", 'output written before the error is kept');
write_file("$dir/osexit.lua", "io.write('before exit\\n')\nos.exit(4)\n");
($c, $o, $e) = run_gp('run', "$dir/osexit.lua");
is($c, 4, 'os.exit code passes through');
is($o, "before exit\n", 'buffered output is flushed on os.exit');
write_file("$dir/ret256.lua", "return 256\n");
($c, $o, $e) = run_gp('run', "$dir/ret256.lua");
is($c, 1, 'a return value that is not an exit status exits 1, not 0');
like($e, qr/returned 256, not an exit status/, 'and says why');
($c, $o, $e) = run_gp('run', $dir);
is($c, 1, 'run of a directory exits 1');
like($e, qr/^gpuplan: cannot open script '\Q$dir\E': is a directory$/, 'directory named');
# stdout and stderr into one pipe: what was printed before the error comes
# first.
{
    my $out = `$main::GP run $dir/usermsg.lua 2>&1`;
    is($out, "partial\ngpuplan: unknown gpu 'x'\n", 'stdout flushed before the error message');
}

# A script on a pipe (gpuplan run /dev/stdin, process substitution).
{
    my $out = `echo 'print("from a pipe")' | $main::GP run /dev/stdin 2>&1`;
    is($out, "from a pipe\n", 'a script read from a pipe runs');
}

# Output that cannot be written is an error, not a silent success.
SKIP: {
    skip '/dev/full not available', 2 unless -w '/dev/full';
    my $err = `$main::GP --version 2>&1 >/dev/full`;
    isnt($? >> 8, 0, 'writing to a full device exits non-zero');
    like($err, qr/^gpuplan: cannot write output: /, 'and says so');
}

# Lua modules missing (a broken install, a wrong GPUPLAN_HOME): one line
# saying what is missing and where the root came from.
{
    local $ENV{GPUPLAN_HOME} = "$dir/empty-home";
    ($c, $o, $e) = run_gp('--version');
    is($c, 1, 'missing Lua modules exit 1');
    is($e, "gpuplan: cannot find the gpuplan Lua modules: no $dir/empty-home/lua/gpuplan/cli.lua (root from GPUPLAN_HOME)\n",
       'one line naming the missing file and the setting');
}

# An option given twice: the last one wins (so a wrapper's default can be
# overridden by appending).
($c, $o, $e) = run_gp('catalog', 'list', 'archs', '--format', 'json', '--format', 'csv');
is($c, 0, 'a repeated option is accepted');
like($o, qr/^id,name,/, 'and the last value is used');

# A command module that fails to load: its own error when used, and the
# help of the others still works.
{
    my $home = "$dir/home";
    system('mkdir', '-p', "$home/lua/gpuplan/cmd");
    system('cp', '-R', 'lua', 'catalog', 'scripts', $home);
    write_file("$home/lua/gpuplan/cmd/merge.lua", "local x = = 1\n");
    local $ENV{GPUPLAN_HOME} = $home;
    ($c, $o, $e) = run_gp('--help');
    is($c, 0, '--help with a broken command module exits 0');
    like($o, qr/^  merge\s+\(cannot load: .*merge.lua:1: /m, 'and names the broken module');
    like($o, qr/^  catalog\s+list, show/m, 'the other commands are listed');
    ($c, $o, $e) = run_gp('merge');
    is($c, 1, 'running the broken command exits 1');
    like($e, qr/merge.lua:1: unexpected symbol/, 'with its syntax error');
}

done_testing();
