import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { envelope, type ErrorEnvelope } from './error-envelope';

/** What the HTTP parser found wrong, as a client's developer would put it. */
const PROBLEMS: Readonly<Record<string, string>> = {
  HPE_INVALID_METHOD: 'the method is not one HTTP knows',
  HPE_INVALID_VERSION: 'the HTTP version is not 1.0 or 1.1',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length is not valid',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length is given more than once',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding is not valid',
  HPE_INVALID_CHUNK_SIZE: 'a chunk size is not valid',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds a character HTTP does not allow',
  HPE_INVALID_URL: 'the request target is not valid',
};

/** llhttp's reason when both framings are given (its code says only that one is invalid). */
const BOTH_FRAMINGS = /can't be present with/;

const answer = (error: { code?: string; reason?: unknown }): [number, ErrorEnvelope] => {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [408, envelope('request_timeout', 'the request was not received in time')];
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return [
      431,
      envelope('headers_too_large', "the request's headers are larger than the server reads"),
    ];
  }
  const problem =
    typeof error.reason === 'string' && BOTH_FRAMINGS.test(error.reason)
      ? 'Content-Length and Transfer-Encoding are both set'
      : (PROBLEMS[error.code ?? ''] ?? 'not a well-formed HTTP/1.1 request');
  return [
    400,
    envelope('validation_failed', `invalid request: ${problem}`, {
      fields: [{ field: 'request', problems: [problem] }],
    }),
  ];
};

/**
 * Requests the HTTP parser refuses before Fastify routes them (a Content-Length that does not
 * add up, an unknown method, a control character in a header, headers over the size limit):
 * answered in the error envelope like every other refusal, then the connection is closed, as
 * Node and Fastify do (the rest of the stream cannot be trusted).
 */
export const clientErrors = (
  error: Error & { code?: string; reason?: unknown },
  socket: Socket,
): void => {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, body] = answer(error);
  const text = JSON.stringify(body);
  // A request already answered (a caller turned away before its body was read, whose body
  // then does not parse): a second answer would pair with the next request on a shared
  // connection. Only closed, as Node's own handler does.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !answering?.headersSent) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n' +
        text,
    );
  }
  socket.destroy(error);
};

/**
 * Node's parser also takes HTTP/0.9 (a request line without a version) and HTTP/2.0 request
 * lines in HTTP/1 framing, which the API does not speak: refused as any other version is
 * (HPE_INVALID_VERSION above). Undefined for HTTP/1.0 and 1.1.
 */
export const unsupportedVersion = (
  request: IncomingMessage,
): [number, ErrorEnvelope] | undefined =>
  request.httpVersionMajor === 1 ? undefined : answer({ code: 'HPE_INVALID_VERSION' });

/** `Expect:` other than `100-continue`: 417, in the envelope (Node's own 417 has no body). */
export const refuseExpectation = (request: IncomingMessage, response: ServerResponse): void => {
  const text = JSON.stringify(
    envelope('expectation_failed', 'the only expectation served is 100-continue', {
      fields: [{ field: 'Expect', problems: ['must be 100-continue'] }],
    }),
  );
  response.writeHead(417, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    connection: 'close',
  });
  response.end(text);
  request.resume();
};
