# The references generated from the declarations -- docs/cli.md, docs/lua.md,
# man/gpuplan.1, completion/gpuplan.bash -- are what `make docs` writes now;
# the man page renders; the completion completes; `make install` puts the
# man page and the completion where Debian looks (DESTDIR-aware) and `make
# uninstall` removes only what install put there.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my @generated = ('docs/cli.md', 'docs/lua.md', 'man/gpuplan.1', 'completion/gpuplan.bash');

sub slurp {
    my ($p) = @_;
    open my $fh, '<', $p or return undef;
    local $/;
    my $s = <$fh>;
    close $fh;
    return $s;
}

# 1. Current: regenerate into a scratch tree and compare.
my $dir = tempdir(CLEANUP => 1);
my ($c, $o, $e) = run_gp('run', 'tools/docs.lua', $dir);
is($c, 0, 'tools/docs.lua runs') or diag $e;
for my $f (@generated) {
    my $want = slurp("$dir/$f");
    my $have = slurp($f);
    ok(defined $have, "$f is committed");
    ok(defined $have && defined $want && $have eq $want,
       "$f is current (if not: run `make docs` and commit it)");
}

# 2. The man page renders without a warning and shows the commands and the
# declared options.
SKIP: {
    skip 'groff is not installed', 4 unless -x '/usr/bin/groff';
    # (-Wbreak: an alternatives list such as pretrain|full|lora|qlora is one
    # word wider than a line, which groff may set past the margin)
    my $out = `groff -man -Tutf8 -ww -Wbreak man/gpuplan.1 2>&1 >/dev/null`;
    is($out, '', 'man/gpuplan.1: groff renders it without warnings');
    my $text = `groff -man -Tascii man/gpuplan.1 2>/dev/null | col -b 2>/dev/null`;
    like($text, qr/^NAME\s*\n\s+gpuplan\s+-\s+plan\s+large-model\s+GPU\s+jobs/m, 'man: NAME');
    like($text, qr/gpuplan train\s*\n.*?--global-batch N/s, 'man: train lists --global-batch N');
    like($text, qr/GPUPLAN_CATALOG/, 'man: ENVIRONMENT');
}

# 3. The completion: bash parses it, and it completes commands and each
# command's declared options.
# COMP_WORDS as bash sets them, _gpuplan run, COMPREPLY sorted; the
# catalog look-ups run this tree's ./gpuplan.
sub complete {
    my (@words) = @_;
    my $line = join ' ', map { "\"$_\"" } @words;
    my $script = ". completion/gpuplan.bash; COMP_WORDS=($line); COMP_CWORD=$#words; "
               . "gpuplan() { ./gpuplan \"\$@\"; }; _gpuplan; printf \"%s\\n\" \"\${COMPREPLY[@]}\"";
    open my $ph, '-|', 'bash', '-c', $script or die "bash: $!";
    my @out = <$ph>;
    close $ph;
    chomp @out;
    return [ sort grep { $_ ne '' } @out ];
}
is(system('bash', '-n', 'completion/gpuplan.bash'), 0, 'bash -n completion/gpuplan.bash');
is_deeply(complete('gpuplan', 'tr'), ['train'], 'completes a command');
is_deeply(complete('gpuplan', 'train', 'llama2-7b', '--global-b'), ['--global-batch'],
          'completes an option of train');
is_deeply(complete('gpuplan', 'plan', '--tp-m'), ['--tp-max'], 'plan: its own options');
ok((grep { $_ eq '--no-flash' } @{ complete('gpuplan', 'fit', '--no-fl') }), 'a flag also as --no-');
is_deeply(complete('gpuplan', 'train', '--format', 'cs'), ['csv'], '--format values');
ok((grep { $_ eq 'h100-sxm' } @{ complete('gpuplan', 'train', '--gpu', 'h100') }),
   '--gpu completes the catalog ids');
is_deeply(complete('gpuplan', 'infer', '--sequence'), [], 'nothing undeclared');

# 4. make install / uninstall into a DESTDIR: the man page and the
# completion where Debian looks for them; uninstall removes what install
# put there and leaves the rest.  (Under `make test` the build's settings
# reach this make through MAKEFLAGS, so the binary is not rebuilt; if it
# would be, the check is skipped rather than rebuild under the suite.)
SKIP: {
    my $q = system('make -s -q gpuplan >/dev/null 2>&1');
    skip 'the build is not current for a plain make (make -q gpuplan)', 12 if $q != 0;
    my $dest = tempdir(CLEANUP => 1);
    my $out = `make -s install DESTDIR=$dest PREFIX=/usr/local 2>&1`;
    is($?, 0, 'make install DESTDIR=...') or diag $out;
    my $p = "$dest/usr/local";
    ok(-x "$p/bin/gpuplan", 'the binary');
    ok(-f "$p/share/man/man1/gpuplan.1", 'the man page in share/man/man1');
    ok(-f "$p/share/bash-completion/completions/gpuplan", 'the completion in share/bash-completion/completions');
    ok(-f "$p/share/gpuplan/lua/gpuplan/init.lua", 'the Lua modules in DATADIR');
    my $v = `GPUPLAN_HOME=$p/share/gpuplan $p/bin/gpuplan fit llama2-7b --gpu h100-sxm 2>&1`;
    like($v, qr/^fits: /m, 'the installed binary runs from the installed tree');
    # Someone else's files beside ours.
    write_file("$p/share/gpuplan/catalog/site-prices.lua", "-- the site's own\n");
    write_file("$p/share/man/man1/other.1", ".TH OTHER 1\n");
    $out = `make -s uninstall DESTDIR=$dest PREFIX=/usr/local 2>&1`;
    is($?, 0, 'make uninstall DESTDIR=...') or diag $out;
    ok(!-e "$p/bin/gpuplan" && !-e "$p/share/man/man1/gpuplan.1"
       && !-e "$p/share/bash-completion/completions/gpuplan", 'the binary, man page and completion are gone');
    ok(!-e "$p/share/gpuplan/lua" && !-e "$p/share/gpuplan/scripts", 'the installed trees are gone');
    ok(-f "$p/share/gpuplan/catalog/site-prices.lua", "a file install did not put there stays");
    ok(-f "$p/share/man/man1/other.1", 'another man page stays');
    my @left = `find $p/share/gpuplan -type f`;
    is(scalar(@left), 1, 'only that file is left under DATADIR');
}

done_testing();
