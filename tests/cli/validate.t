# gpuplan validate: the report frame and its JSON form.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json');
is($c, 0, 'validate exits 0');
like($o, qr/^Not predicted$/m, 'lists the cases not predicted');
like($o, qr/^mini-unknown-predictor\s+collective\s+busbw_gbps\s+\S/m, 'unpredicted case has a reason');
like($o, qr/^kind\s+cases\s+predicted\s+median \|err\|\s+p90 \|err\|$/m, 'summary header');
like($o, qr/^train\s+1\s+\d/m, 'summary counts the training case');

($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', '--format', 'json');
is($c, 0, 'json exits 0');
like($o, qr/^\[\n \{"id":"mini-unknown-predictor".*\n \{"id":"mini-train","kind":"train","metric":"hfu_tflops_per_gpu","measured":137,"predicted":/, 'json rows carry id, kind, metric, measured, predicted');
like($o, qr/"error":/, 'json has error');
like($o, qr/"reason":/, 'json has reason');

($c, $o, $e) = run_gp('validate');
is($c, 2, 'no case file is a usage error');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/bad_json.json');
is($c, 1, 'bad JSON exits 1');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/bad_json.json: invalid JSON/, 'bad JSON names the file');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', '--kind', 'bogus');
is($c, 2, 'bad --kind is a usage error');

# No cases at all: the frame, exit 0; JSON an empty array.
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/empty.json');
is($c, 0, 'an empty case list exits 0');
like($o, qr/^Summary by kind/m, 'and prints the frame');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/empty.json', '--format', 'json');
is($o, "[]\n", 'empty JSON array');
# The same id in two files is one case too many.
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', 'tests/fixtures/validation/duplicate.json', 'tests/fixtures/validation/mini_again.json');
is($c, 1, 'an id repeated across files exits 1');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/duplicate.json: case 'twice' \(case 2\) repeats the id of case 1$/m, 'both places named');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', 'tests/fixtures/validation/mini_again.json');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/mini_again.json: case 'mini-train' \(case 1\) repeats the id of tests\/fixtures\/validation\/mini.json case 1$/m, 'across files: both files named');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/mini.json', 'tests/fixtures/validation/mini.json');
like($e, qr/^gpuplan: tests\/fixtures\/validation\/mini.json: the file is given twice$/m, 'a file given twice');
($c, $o, $e) = run_gp('validate', 'tests/fixtures/validation/inf_value.json');
is($c, 1, 'a non-finite measurement exits 1');
unlike($e, qr/traceback/, 'without a traceback');

SKIP: {
    skip 'shared validation cases not present', 2 unless -f '../shared/validation/cases.json';
    ($c, $o, $e) = run_gp('validate', '../shared/validation/cases.json');
    is($c, 0, 'the shared cases validate');
    like($o, qr/^collective\s+20\s/m, 'all 20 collective cases counted');
}
done_testing();
