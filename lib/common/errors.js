'use strict';

// Errors with a stable `code`, shaped like Node's internal errors:
// `err.code` is the contract, the message is for humans.

const { inspect } = require('util');

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

// node's ERR_INVALID_ARG_TYPE, message included: `The "name" argument must
// be of type string. Received undefined` (what: '"name" argument',
// expected: 'of type string'). The "Received" part says what was passed, as
// node's internal errors word it.
function invalidArgType(what, expected, value) {
  return codedTypeError('ERR_INVALID_ARG_TYPE', `The ${what} must be ${expected}.${received(value)}`);
}

function received(value) {
  if (value == null) return ` Received ${value}`;
  if (typeof value === 'function') return ` Received function ${value.name}`;
  if (typeof value === 'object') {
    if (value.constructor && value.constructor.name) {
      return ` Received an instance of ${value.constructor.name}`;
    }
    return ` Received ${inspect(value, { depth: -1 })}`;
  }
  let shown = inspect(value, { colors: false });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return ` Received type ${typeof value} (${shown})`;
}

module.exports = { codedError, codedTypeError, codedRangeError, invalidArgType, received };
