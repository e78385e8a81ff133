import { AppError, type Issue } from "../../platform/errors.js";

/**
 * Rules the schemas cannot express, reported like schema failures: 400 validation_failed with one issue
 * per problem, each a JSON Pointer into the request body.
 */
export class Issues {
  private readonly list: Issue[] = [];

  add(path: string, message: string): void {
    this.list.push({ path, message });
  }

  throwIfAny(summary = "request body failed validation"): void {
    if (this.list.length > 0) throw new AppError("validation_failed", summary, { issues: [...this.list] });
  }
}

export function invalidField(path: string, message: string): AppError {
  return new AppError("validation_failed", `${path.slice(1).replaceAll("/", ".")} ${message}`, { issues: [{ path, message }] });
}
