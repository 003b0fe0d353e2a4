import { z } from 'zod';

// Imported for its effect by every module that reports zod issues: a missing field then reads
// "user_message: Required" rather than zod's type-mismatch wording, and a query value that is no
// number (`?limit=abc`, coerced to NaN) "Expected a number" rather than "received NaN".
z.config({
  customError: (issue) => {
    if (issue.code !== 'invalid_type') return undefined;
    if (issue.input === undefined) return 'Required';
    if (issue.expected === 'number' && Number.isNaN(issue.input)) return 'Expected a number';
    return undefined;
  },
});
