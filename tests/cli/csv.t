# Every command's --format csv is one table a spreadsheet opens: a header,
# then records with as many fields as the header (RFC 4180 quoting; a
# quoted field may hold commas, quotes and newlines), no blank line, no
# second header.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Path qw(make_path);
require './tests/cli/lib.pl';

# RFC 4180 records of a string: a list of array refs; undef on a syntax
# error (an unterminated quote, a quote inside an unquoted field).
sub parse_csv {
    my ($s) = @_;
    my (@recs, @f, $cur);
    my $i = 0;
    my $n = length $s;
    my $start = 1;
    while ($i < $n) {
        my $ch = substr($s, $i, 1);
        if ($start && $ch eq '"') {
            my $j = $i + 1;
            my $v = '';
            while (1) {
                return undef if $j >= $n;
                my $d = substr($s, $j, 1);
                if ($d eq '"') {
                    if ($j + 1 < $n && substr($s, $j + 1, 1) eq '"') { $v .= '"'; $j += 2; next }
                    last;
                }
                $v .= $d; $j++;
            }
            $cur = $v; $i = $j + 1; $start = 0;
            my $next = $i < $n ? substr($s, $i, 1) : "\n";
            return undef unless $next eq ',' || $next eq "\n";
            next;
        }
        if ($ch eq ',') { push @f, $cur // ''; $cur = undef; $start = 1; $i++; next }
        if ($ch eq "\n") { push @f, $cur // ''; push @recs, [@f]; @f = (); $cur = undef; $start = 1; $i++; next }
        return undef if $ch eq '"';
        $cur .= $ch; $start = 0; $i++;
    }
    return undef if @f || defined $cur;    # the last record ends with a newline
    return \@recs;
}

sub one_table {
    my ($name, @cmd) = @_;
    my ($c, $o, $e) = run_gp(@cmd);
    is($c, 0, "$name: exits 0") or diag $e;
    my $recs = parse_csv($o);
    ok($recs, "$name: parses as CSV") or return;
    ok(@$recs >= 2, "$name: a header and at least one row") or return;
    my $w = @{ $recs->[0] };
    my @bad = grep { @{ $recs->[$_] } != $w } 0 .. $#$recs;
    is("@bad", '', "$name: every record has the header's $w fields");
    my @blank = grep { @{ $recs->[$_] } == 1 && $recs->[$_][0] eq '' } 0 .. $#$recs;
    is("@blank", '', "$name: no blank line (no second table)");
    my $head = join ',', @{ $recs->[0] };
    my @again = grep { join(',', @{ $recs->[$_] }) eq $head } 1 .. $#$recs;
    is("@again", '', "$name: the header appears once");
    return $recs;
}

sub col {
    my ($recs, $label) = @_;
    my ($k) = grep { $recs->[0][$_] eq $label } 0 .. $#{ $recs->[0] };
    return defined $k ? [ map { $_->[$k] } @$recs[1 .. $#$recs] ] : undef;
}

# fit: the verdict and the defaults are columns on every row.
my $r = one_table('fit full', 'fit', 'llama2-7b', '--gpu', 'h100-sxm', '--format', 'csv');
my $fits = col($r, 'fits');
ok($fits && !grep({ $_ ne 'no' } @$fits), 'fit: fits = no on every row (7B full FT on one H100)');
my $v = col($r, 'verdict');
like($v->[0], qr/^fits: no \(short by [\d.]+ GiB; largest term optimizer/, 'fit: the verdict column');
like(col($r, 'defaults')->[0], qr/method=full, zero=0, seq=2048/, 'fit: the defaults column');
like(col($r, 'details')->[0], qr/^model states: 16\.0 B\/param/, 'fit: the bytes-per-parameter line');
is(col($r, 'component')->[-1], 'budget', 'fit: components through the budget row');
$r = one_table('fit qlora pp', 'fit', 'llama2-70b', '--gpu', 'h100-sxm', '--gpus', '2', '--pp', '2',
               '--method', 'qlora', '--format', 'csv');
like(col($r, 'details')->[0], qr/most loaded pipeline stage: \d of 2/, 'fit: pipeline stage in details');
$r = one_table('fit infer', 'fit', 'llama2-7b', '--gpu', 'rtx-4090', '--method', 'infer', '--format', 'csv');
like(col($r, 'details')->[0], qr/max concurrent sequences at this context/, 'fit infer: capacity line in details');

# infer: one row with its defaults; --ops the operator table.
$r = one_table('infer', 'infer', 'llama3.1-8b', '--gpu', 'h200-sxm', '--format', 'csv');
like(col($r, 'defaults')->[0], qr/kv=bf16, kv policy: mean/, 'infer: the defaults column');
$r = one_table('infer --ops', 'infer', 'llama3.1-8b', '--gpu', 'h200-sxm', '--ops', '--format', 'csv');
is(col($r, 'name')->[0], 'attn_norm', 'infer --ops: the decode operators');
one_table('infer --sweep-batch', 'infer', 'llama3.1-8b', '--gpu', 'h200-sxm', '--sweep-batch', '--format', 'csv');
one_table('infer --target', 'infer', 'llama3.1-8b', '--gpu', 'h200-sxm', '--target', '10000', '--format', 'csv');
$r = one_table('infer does not fit', 'infer', 'llama3.1-405b', '--gpu', 'rtx-4090', '--format', 'csv');
is(col($r, 'fits')->[0], 'no', 'infer: a deployment that does not fit is a row, fits = no');

# validate: one table of cases; --summary the per-kind table.
$r = one_table('validate', 'validate', 'tests/fixtures/validation/mini.json', '--format', 'csv');
is(join(',', @{ $r->[0] }), 'id,kind,metric,measured,predicted,error,predicted_lo,predicted_hi,reason,defaults', 'validate: the case columns');
like(col($r, 'reason')->[0], qr/\S/, 'validate: an unpredicted case carries its reason');
$r = one_table('validate --summary', 'validate', 'tests/fixtures/validation/mini.json', '--summary', '--format', 'csv');
is(join(',', @{ $r->[0] }), 'kind,cases,predicted,median,p90,coverage', 'validate --summary columns: the keys');

# The other commands.
one_table('comm', 'comm', '--system', 'dgx-h100', '--op', 'all_reduce', '--min', '1MiB', '--max', '4MiB', '--format', 'csv');
one_table('roofline', 'roofline', '--gpu', 'h200-sxm', '--format', 'csv');
for my $t (qw(gpus archs fabrics systems prices currencies models)) {
    one_table("catalog list $t", 'catalog', 'list', $t, '--format', 'csv');
}
one_table('catalog show', 'catalog', 'show', 'h20', '--format', 'csv');
one_table('model params', 'model', 'params', 'mixtral-8x7b', '--format', 'csv');
one_table('model params config', 'model', 'params', 'tests/fixtures/hf/llama-2-7b.json', '--format', 'csv');
$r = one_table('guide', 'run', 'scripts/guide.lua', '--format', 'csv');
my %sections = map { $_ => 1 } @{ col($r, 'section') };
is(scalar keys %sections, 4, 'guide: the four sections are rows of one table');
one_table('check_claims', 'run', 'scripts/check_claims.lua', '--format', 'csv');

# An id in two tables: catalog show is still one table, with a kind column.
my $dir = tempdir(CLEANUP => 1);
write_file("$dir/twin.lua", <<'LUA');
model { id = "h20", name = "a model named like a GPU", layers = 2, hidden = 64, heads = 2,
        ffn_hidden = 128, vocab = 100, params_b = 0.0001, source = "test" }
LUA
{
    local $ENV{GPUPLAN_CATALOG} = $dir;
    $r = one_table('catalog show (two kinds)', 'catalog', 'show', 'h20', '--format', 'csv');
    my %k = map { $_ => 1 } @{ col($r, 'kind') };
    is(join(',', sort keys %k), 'gpu,model', 'both entries, told apart by kind');
}

# model import prints a Lua entry: --format does not apply, and says so.
my ($c, $o, $e) = run_gp('model', 'import', 'tests/fixtures/hf/llama-2-7b.json', '--format', 'csv');
is($c, 2, 'model import --format: usage error');
like($e, qr/--format does not apply/, 'and says why');
done_testing();
