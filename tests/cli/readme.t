# Every example in README.md and in docs/*.md is replayed and compared with
# the binary.
#
# The fenced blocks are read by kind, so a section added later is
# replayed with no change here:
#   ``` (no language)  an example: "$ ./gpuplan ..." lines (a trailing "\"
#                      continues one), each followed by the output it shows.
#                      The command runs through sh with stdout and stderr
#                      together (as a terminal shows them); the lines shown
#                      must be the output's, in order and adjacent.  A line
#                      "..." stands for any number of lines left out (at the
#                      start: the shown lines need not begin the output; at
#                      the end: need not end it); "..." inside a line stands
#                      for any text.  Exit 0, or 1 (2) for an example of an
#                      error (a usage error).
#   ```sh              commands: each "./gpuplan ..." (after "&&" splitting
#                      and "#" comments) must exit 0; "make ..." steps are
#                      the build itself, which CI runs, and are not replayed.
#   ```lua             a script: run with ./gpuplan run, must exit 0.
#   ```text            prose, not replayed (anything else that is not an
#                      example must be marked so).
# Any other block is an error: an example nobody replays is not allowed.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

# A user's catalog must not change what the README shows.
my $home = tempdir(CLEANUP => 1);
$ENV{XDG_CONFIG_HOME} = $home;
$ENV{HOME} = $home;
delete $ENV{GPUPLAN_CATALOG};
delete $ENV{GPUPLAN_DEBUG};

# Does the actual line $a match the shown line $e ("..." = any text)?
sub line_matches {
    my ($e, $a) = @_;
    return $e eq $a unless index($e, '...') >= 0;
    my @parts = split /\.\.\./, $e, -1;
    my $re = join '.*?', map { quotemeta } @parts;
    return $a =~ /\A$re\z/s;
}

# Are the shown lines @$exp in the output @$act (see the header)?
# Returns '' when they are, else what is wrong.
sub output_matches {
    my ($exp, $act) = @_;
    my @chunks = ([]);
    for my $l (@$exp) {
        if ($l eq '...') { push @chunks, [] } else { push @{ $chunks[-1] }, $l }
    }
    my $open_start = @$exp && $exp->[0] eq '...';
    my $open_end = @$exp && $exp->[-1] eq '...';
    @chunks = grep { @$_ } @chunks;
    my $pos = 0;
    for my $i (0 .. $#chunks) {
        my $c = $chunks[$i];
        my $fits = sub {
            my ($p) = @_;
            return 0 if $p + @$c > @$act;
            for my $k (0 .. $#$c) { return 0 unless line_matches($c->[$k], $act->[$p + $k]) }
            return 1;
        };
        my $last = $i == $#chunks;
        if ($i == 0 && !$open_start) {
            return "the output does not begin with: $c->[0]" unless $fits->(0);
            return "the output has more lines after: $c->[-1]"
                if $last && !$open_end && @$c != @$act;
            $pos = @$c;
            next;
        }
        if ($last && !$open_end) {
            my $p = @$act - @$c;
            return "the output does not end with: $c->[-1]" unless $p >= $pos && $fits->($p);
            next;
        }
        my $p = $pos;
        $p++ while $p + @$c <= @$act && !$fits->($p);
        return "not found in order in the output: $c->[0]" if $p + @$c > @$act;
        $pos = $p + @$c;
    }
    return '';
}

# The matcher itself, on made-up output.
my @out = ('a', 'b x', 'c', 'd');
is(output_matches(['a', 'b x', 'c', 'd'], \@out), '', 'match: all lines');
like(output_matches(['a', 'b x', 'c'], \@out), qr/more lines/, 'no "..." at the end: the output must end there');
is(output_matches(['a', '...', 'd'], \@out), '', '"..." skips lines');
is(output_matches(['...', 'b ...', 'c', '...'], \@out), '', 'open at both ends; "..." inside a line');
like(output_matches(['...', 'c', 'b x', '...'], \@out), qr/not found/, 'lines out of order fail');
like(output_matches(['a', 'c', '...'], \@out), qr/not found|begin/, 'shown lines must be adjacent');
like(output_matches(['b x', '...'], \@out), qr/begin/, 'no "..." at the start: the output must begin there');

# Run a shell command line in the checkout; (exit, stdout+stderr).
sub run_sh {
    my ($cmd) = @_;
    my $out = `exec </dev/null; $cmd 2>&1`;
    my $code = $? >> 8;
    $code = 128 + ($? & 127) if $? & 127;
    return ($code, $out);
}

# The files replayed: the README and every page of docs/.
my @files = ('README.md', sort glob('docs/*.md'));
ok(@files >= 8, 'README.md and the docs/ pages (' . scalar(@files) . ' files)');

# The fenced blocks of a Markdown file: { lang, line (1-based, of the
# opening fence), body }.
sub fenced_blocks {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my @lines = <$fh>;
    close $fh;
    chomp @lines;
    my (@blocks, $cur);
    for my $i (0 .. $#lines) {
        my $l = $lines[$i];
        if (!$cur && $l =~ /^```(\S*)\s*$/) {
            $cur = { lang => $1, line => $i + 1, body => [] };
        } elsif ($cur && $l =~ /^```\s*$/) {
            push @blocks, $cur;
            $cur = undef;
        } elsif ($cur) {
            push @{ $cur->{body} }, $l;
        }
    }
    ok(!$cur, "every fenced block of $file is closed");
    return @blocks;
}

# Join "\"-continued lines: [text, line number of its first line].
sub logical_lines {
    my ($b) = @_;
    my @out;
    my $n = $b->{line};
    my $acc;
    for my $l (@{ $b->{body} }) {
        $n++;
        if (defined $acc) { $acc->[0] .= ' ' . ($l =~ s/^\s+//r) } else { $acc = [$l, $n] }
        if ($acc->[0] =~ s/\s*\\$//) { next }
        push @out, $acc;
        $acc = undef;
    }
    push @out, $acc if defined $acc;
    return @out;
}

my ($examples, $commands, $scripts) = (0, 0, 0);
my %blocks_in;
for my $file (@files) {
    my @blocks = fenced_blocks($file);
    $blocks_in{$file} = @blocks;
    for my $b (@blocks) {
        my $where = "$file:$b->{line}";
        if ($b->{lang} eq 'text') {
            next;
        } elsif ($b->{lang} eq 'sh') {
            for my $ll (logical_lines($b)) {
                my ($text, $n) = @$ll;
                $text =~ s/(^|\s)#.*$//;
                next unless $text =~ /\S/;
                for my $part (split /\s*&&\s*/, $text) {
                    $part =~ s/^\s+|\s+$//g;
                    next if $part =~ /^make(\s|$)/;
                    if ($part !~ m{^\./gpuplan(\s|$)}) {
                        fail("$file:$n: a sh command that is neither ./gpuplan nor make: $part");
                        next;
                    }
                    my ($code, $out) = run_sh($part);
                    is($code, 0, "$file:$n: $part") or diag $out;
                    $commands++;
                }
            }
        } elsif ($b->{lang} eq 'lua') {
            my $dir = tempdir(CLEANUP => 1);
            write_file("$dir/example.lua", join("\n", @{ $b->{body} }) . "\n");
            my ($code, $out) = run_sh("./gpuplan run $dir/example.lua");
            is($code, 0, "$where: the Lua example runs") or diag $out;
            $scripts++;
        } elsif ($b->{lang} eq '') {
            if (!@{ $b->{body} } || $b->{body}[0] !~ /^\$ /) {
                fail("$where: a plain block must be an example starting with '\$ ./gpuplan' "
                     . "(mark prose blocks ```text)");
                next;
            }
            # Each "$ command" (joined over "\" continuations) with the output
            # lines up to the next one, as written (an output line may itself
            # end in a backslash).
            my @ex;
            my $i = 0;
            my @body = @{ $b->{body} };
            while ($i < @body) {
                my $n = $b->{line} + 1 + $i;
                if ($body[$i] =~ /^\$ (.*)$/) {
                    my $cmd = $1;
                    while ($cmd =~ s/\s*\\$// && $i + 1 < @body) { $i++; $cmd .= ' ' . ($body[$i] =~ s/^\s+//r) }
                    push @ex, { cmd => $cmd, line => $n, out => [] };
                } else {
                    push @{ $ex[-1]{out} }, $body[$i] =~ s/\s+$//r;
                }
                $i++;
            }
            for my $x (@ex) {
                my $w = "$file:$x->{line}";
                if ($x->{cmd} !~ m{^\./gpuplan(\s|$)}) { fail("$w: an example must run ./gpuplan: $x->{cmd}"); next }
                my ($code, $out) = run_sh($x->{cmd});
                my @act = map { s/\s+$//r } split /\n/, $out;
                pop @act while @act && $act[-1] eq '';
                ok($code >= 0 && $code <= 2, "$w: exits 0, 1 or 2 ($code): $x->{cmd}") or diag $out;
                my $why = output_matches($x->{out}, \@act);
                is($why, '', "$w: the output shown matches: $x->{cmd}") or diag "actual output:\n$out";
                $examples++;
            }
        } else {
            fail("$where: a ```$b->{lang} block: examples are ``` (\$ ./gpuplan ...), ```sh, ```lua, or ```text for prose");
        }
    }
}
ok($blocks_in{'README.md'} >= 4, "README.md has its examples ($blocks_in{'README.md'} blocks)");
ok($examples >= 6, "replayed $examples examples with output");
ok($commands >= 8, "ran $commands sh commands");
ok($scripts >= 1, "ran $scripts Lua example");
done_testing();

