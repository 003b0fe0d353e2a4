/** Ends the run with one plain "N passed, N failed, N skipped" line that any CI log reader can parse. */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
    console.log(
      `tests: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped`,
    );
  }
}

module.exports = SummaryReporter;
