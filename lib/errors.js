'use strict';

// Errors with a stable `code`, shaped like Node's internal errors:
// `err.code` is the contract, the message is for humans.

function makeError(Base, code, message) {
  const err = new Base(message);
  Object.defineProperty(err, 'code', {
    value: code, enumerable: true, writable: true, configurable: true,
  });
  return err;
}

function codedError(code, message) {
  return makeError(Error, code, message);
}

function codedTypeError(code, message) {
  return makeError(TypeError, code, message);
}

function codedRangeError(code, message) {
  return makeError(RangeError, code, message);
}

module.exports = { codedError, codedTypeError, codedRangeError };
