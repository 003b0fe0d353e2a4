/** The floor workflow's step: an activity's whole cost in the engine, with no work of its own. */
export const floorActivities = {
  doNothing(): Promise<void> {
    return Promise.resolve();
  },
};
