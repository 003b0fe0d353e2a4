/** Ends the run with one plain "N passed, N failed, N skipped" line that any CI log reader can parse. */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    const skipped = numPendingTests + numTodoTests;
    // stderr, like Jest's own summary, so this line comes after it.
    process.stderr.write(
      `tests: ${numPassedTests} passed, ${numFailedTests} failed, ${skipped} skipped\n`,
    );
  }
}

module.exports = SummaryReporter;
