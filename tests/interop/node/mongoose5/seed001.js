// Seed 001's daily IDs ("Generating Unique and Readable IDs in Node.js Using MongoDB"): its schema
// and its `nextId` exactly as the article writes them, on mongoose 5 (the article's callbacks),
// retried on a duplicate key as the article says. Its `{ upsert: true }` has no `new: true`, so
// mongoose returns the counter as it was before the `$inc` (`null` when the upsert created it):
// the number taken is that count plus one. The ID is the day and that number in 6 digits,
// "251125000008", as `prefix = "YYMMDD"` renders it on the Rust side.
'use strict';

var mongoose = require('mongoose'),
    Schema   = mongoose.Schema;

var IdSchema = new Schema({
  prefix: { type: Number, required: true, index: { unique: true } },
  count:  { type: Number, required: true }
});

mongoose.model('Id', IdSchema);

var moment = require('moment'),
    Id     = mongoose.model('Id');

var nextId = function (callback) {
  function prefix (date) {
    return parseInt(moment(date).format('YYMMDD'));
  }

  Id.findOneAndUpdate(
    { prefix: prefix(new Date()) },
    { $inc:   { count: 1 } },
    { upsert: true },
    function (err, idDoc) {
      callback(err, idDoc);
    });
};

const protocol = require('../protocol');
const connect = require('./connect');

// One number, `nextId` retried while it fails on a duplicate key (two first upserts of a day).
function takeNumber(day) {
  return new Promise((resolve, reject) => {
    nextId(function (err, idDoc) {
      if (err && err.code === 11000) {
        takeNumber(day).then(resolve, reject);
      } else if (err) {
        reject(err);
      } else {
        resolve(idDoc ? idDoc.prefix + String(idDoc.count + 1).padStart(6, '0') : day() + '000001');
      }
    });
  });
}

protocol.main(async () => {
  const { uri, database } = protocol.args();
  await connect(mongoose, uri, database);
  await Id.init();
  const Receipt = mongoose.model('Receipt', new Schema({ _id: String, by: String }));
  const day = () => moment().format('YYMMDD');
  await protocol.run(async (by) => new Receipt({ _id: await takeNumber(day), by }).save());
  await mongoose.disconnect();
});
