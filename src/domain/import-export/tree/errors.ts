/** The archive's tree is unusable: the import fails with this message in import_error. */
export class TreeError extends Error {}
