/** A server or client error shown under the field it is about (`error-<field>`). */
export function FieldError({ field, message }: { field: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p className="error field-error" role="alert" id={`error-${field}`} data-testid={`error-${field}`}>
      {message}
    </p>
  );
}
