# Hardening (issue 13): inputs that hung the tool, ate memory, overwrote a
# file through a link or leaked an internal error.  Each gives a one-line
# error naming the input (exit 1 or 2) or a correct answer.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
require './tests/cli/lib.pl';

my $tmp = tempdir(CLEANUP => 1);
my ($c, $o, $e);

# An error is one line naming the input, without gpuplan's own file:line
# or a traceback.
sub clean_error {
    my ($err, $name) = @_;
    my @lines = grep { /\S/ && !/^usage:/ } split /\n/, $err;
    my $first = $lines[0] // '';
    ok($first =~ /^gpuplan: / && $err !~ /stack traceback|lua\/gpuplan\/[\w\/]+\.lua:\d+/,
       "$name: one clean line") or diag $err;
}

# --- 1. A size sweep whose doubling overflowed never ended -------------
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '5000PB');
is($c, 2, 'comm --max 5000PB: a usage error, not a hang');
like($e, qr/^gpuplan: comm: --max must be a size of 1 B to 2\^50 B \(1 PiB\), got 5000000000000000000$/m,
     'comm --max 5000PB: the limit and the value');
clean_error($e, 'comm --max 5000PB');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '1', '--max', '4611686018427387904');
is($c, 2, 'comm --max 2^62: a usage error');
like($e, qr/--max must be a size of 1 B to 2\^50 B/, 'comm --max 2^62: the limit');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '1', '--max', '1PiB', '--format', 'csv');
is($c, 0, 'comm up to the limit, 1 PiB, answers');
# 1 B .. 2^50 B doubling: 51 sizes, a header line.
is(scalar(split /\n/, $o), 52, '1 B .. 1 PiB is 51 rows');

# --- 2. Output files: never through a link, never over a non-file ------
my $d = "$tmp/d";
make_path($d);
write_file("$tmp/victim", "KEEP\n");
symlink("$tmp/victim", "$d/out.svg.tmp") or die "symlink: $!";
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$d/out.svg");
is($c, 0, 'roofline --svg beside a planted out.svg.tmp link writes the chart');
is(do { local (@ARGV, $/) = ("$tmp/victim"); <> }, "KEEP\n", 'the planted link\'s target is untouched');
ok(-f "$d/out.svg" && !-l "$d/out.svg", 'the chart is a regular file');
like(do { local (@ARGV, $/) = ("$d/out.svg"); <> }, qr/^<svg .*<\/svg>\n\z/s, 'and a whole SVG');
opendir(my $dh, $d); my @left = grep { !/^\.\.?$/ } readdir $dh; closedir $dh;
is_deeply([sort @left], ['out.svg', 'out.svg.tmp'], 'no temporary left in the directory');

symlink("$tmp/victim", "$d/link.svg") or die "symlink: $!";
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$d/link.svg");
is($c, 1, '--svg onto a symbolic link exits 1');
like($e, qr/^gpuplan: cannot write '\Q$d\E\/link.svg': it is a symbolic link/, 'and says it is a link');
is($o, '', 'nothing printed when the chart cannot be written');
ok(-l "$d/link.svg", 'the link is still a link');
is(do { local (@ARGV, $/) = ("$tmp/victim"); <> }, "KEEP\n", 'its target is untouched');

system('mkfifo', "$d/fifo") == 0 or die "mkfifo";
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', "$d/fifo");
is($c, 1, '--svg onto a FIFO exits 1, no hang');
like($e, qr/^gpuplan: cannot write '\Q$d\E\/fifo': it is a FIFO, not a regular file$/m, 'and names the FIFO');
ok(-p "$d/fifo", 'the FIFO is still a FIFO');
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--svg', $d);
is($c, 1, '--svg onto a directory exits 1');
like($e, qr/^gpuplan: cannot write '\Q$d\E': it is a directory, not a regular file$/m, 'and names the directory');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1MiB', '--svg', "$d/link.svg");
is($c, 1, 'comm --svg onto a link exits 1');
is($o, '', 'comm prints no table when the chart cannot be written');
($c, $o, $e) = run_gp('infer', 'llama2-7b', '--gpu', 'h100-sxm', '--sweep-batch', '--svg', "$d/link.svg");
is($c, 1, 'infer --svg onto a link exits 1');
is($o, '', 'infer prints no table when the chart cannot be written');
write_file("$d/old.svg", "old\n");
chmod 0600, "$d/old.svg";
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1MiB', '--svg', "$d/old.svg");
is($c, 0, 'comm --svg over a regular file');
like(do { local (@ARGV, $/) = ("$d/old.svg"); <> }, qr/^<svg /, 'replaces it');
is((stat "$d/old.svg")[2] & 07777, 0600, 'keeping its mode');

# --- 3. Text tables render in time linear in their size ---------------
# A 100,000-character name: the trailing-blank trim of each row retried at
# every blank of the padding, 20 s for 10,000 characters, hours for this.
my $cat = "$tmp/longname";
make_path($cat);
my $long = 'x' x 100000;
write_file("$cat/a.lua", qq{gpu { id = "longname", name = "$long", vendor = "v", arch = "hopper",
  memory = "80GB", mem_bw = "3TB/s", peak = { bf16 = "900TFLOPS" }, source = "s" }\n});
{
    local $ENV{GPUPLAN_CATALOG} = $cat;
    ($c, $o, $e) = run_gp('catalog', 'list', 'gpus');
}
is($c, 0, 'catalog list with a 100,000-character name');
my ($row) = grep { /^longname / } split /\n/, $o;
like($row // "", qr/^longname\s+\Q$long\E\s+80GB/, "the name is printed whole");
ok(!grep({ / +$/ } split /\n/, $o), 'no line ends in blanks');
my $cases = "$tmp/longid.json";
my $id = 'c' x 80000;
write_file($cases, qq{[{"id": "$id", "kind": "memory",
  "model": {"name": "m", "layers": 2, "hidden": 64, "heads": 2, "vocab": 100, "ffn_hidden": 256},
  "hardware": {"gpu": "h100-sxm", "gpus": 1},
  "workload": {"method": "full", "seq_len": 128},
  "measured": {"metric": "peak_memory_gib", "value": 1.5, "unit": "GiB"}}]\n});
($c, $o, $e) = run_gp('validate', $cases);
is($c, 0, 'validate a case with an 80,000-character id');
like($o, qr/^\Q$id\E +memory /m, "the id is printed whole");

done_testing();
