import { z } from 'zod';

// Imported for its effect by every module that reports zod issues: a missing field then reads
// "user_message: Required" rather than zod's type-mismatch wording.
z.config({
  customError: (issue) =>
    issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined,
});
