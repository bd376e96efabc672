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

($c, $o, $e) = run_gp('catalog', 'list', '--format', 'xml');
is($c, 2, 'bad --format exits 2');
like($e, qr/--format' expects text, markdown, csv or json, got 'xml'/, 'bad format value quoted');

($c, $o, $e) = run_gp('run');
is($c, 2, 'run without a script exits 2');

($c, $o, $e) = run_gp('run', 'no/such/script.lua');
is($c, 1, 'missing script exits 1');
like($e, qr/^gpuplan: cannot open script 'no\/such\/script.lua'/, 'missing script named');

my $dir = tempdir(CLEANUP => 1);
write_file("$dir/raise.lua", "local x = 1\nerror('boom')\n");
($c, $o, $e) = run_gp('run', "$dir/raise.lua");
is($c, 1, 'script that raises exits 1');
like($e, qr/^gpuplan: \Q$dir\E\/raise.lua:2: boom$/m, 'one-line message names file:line');
like($e, qr/stack traceback/, 'traceback follows');

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

done_testing();
