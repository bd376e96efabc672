# Helpers for the CLI tests: run ./gpuplan and capture exit, stdout, stderr.
use strict;
use warnings;
use File::Temp qw(tempfile tempdir);
use IPC::Open3;
use Symbol 'gensym';

our $GP = $ENV{GPUPLAN_BIN} || './gpuplan';

# A run that has not ended after this many seconds is killed and reads as
# exit 137: a hang fails its test instead of stalling the suite.  Not a
# speed check (make bench measures speed): every command here ends in well
# under a second, the limit only catches one that never would.
our $HANG_LIMIT = $ENV{GPUPLAN_TEST_HANG_LIMIT} || 120;

# run_gp(@args) -> ($exit, $stdout, $stderr); stdin is empty.
sub run_gp {
    my @args = @_;
    my ($out_fh, $out) = tempfile(UNLINK => 1);
    my ($err_fh, $err) = tempfile(UNLINK => 1);
    my $pid = fork();
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        open(STDIN, '<', '/dev/null');
        open(STDOUT, '>&', $out_fh);
        open(STDERR, '>&', $err_fh);
        exec($GP, @args) or exit 127;
    }
    {
        local $SIG{ALRM} = sub { kill 'KILL', $pid };
        alarm $HANG_LIMIT;
        waitpid($pid, 0);
        alarm 0;
    }
    my $code = $? >> 8;
    $code = 128 + ($? & 127) if $? & 127;
    local $/;
    open(my $o, '<', $out); my $so = <$o> // ''; close $o;
    open(my $e, '<', $err); my $se = <$e> // ''; close $e;
    return ($code, $so, $se);
}

# write_file($path, $text)
sub write_file {
    my ($path, $text) = @_;
    open(my $fh, '>', $path) or die "$path: $!";
    print $fh $text;
    close $fh;
}

# shipped_cases() -> the array of validation/cases.json's cases, decoded
sub shipped_cases {
    require JSON::PP;
    open(my $fh, '<', 'validation/cases.json') or die "validation/cases.json: $!";
    my $all = JSON::PP->new->decode(do { local $/; <$fh> });
    close $fh;
    return $all;
}

1;
