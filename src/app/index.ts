// The App API: schema, types, validation and labels/finalizer names.

export * from "./duration.ts";
export * from "./schema.ts";
export * from "./tracking.ts";
export * from "./validate.ts";
