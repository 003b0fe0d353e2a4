/**
 * Ends the run with one plain "N passed, N failed, N skipped" line that any CI log reader can
 * parse, plus the files that failed outside any test (set-up, or a leak found at teardown).
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const skipped = numPendingTests + numTodoTests;
    const broken = results.testResults.filter((file) => file.testExecError).length;
    const files = broken ? `, ${broken} test files failed to run` : '';
    // stderr, like Jest's own summary, so this line comes after it.
    process.stderr.write(
      `tests: ${numPassedTests} passed, ${numFailedTests} failed, ${skipped} skipped${files}\n`,
    );
  }
}

module.exports = SummaryReporter;
