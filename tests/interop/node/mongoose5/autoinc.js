// mongoose-plugin-autoinc 1.1.9 (the maintained fork of mongoose-auto-increment) on mongoose 5.13,
// numbering `_id` of the model `Ticket` as its README shows: counter `{ model: "Ticket",
// field: "_id", groupingField: "", count }` in `identitycounters`, first value 0 (`startAt`).
'use strict';

const mongoose = require('mongoose');
const { autoIncrement } = require('mongoose-plugin-autoinc');
const protocol = require('../protocol');
const connect = require('./connect');

protocol.main(async () => {
  const { uri, database } = protocol.args();
  await connect(mongoose, uri, database);
  const TicketSchema = new mongoose.Schema({ by: String });
  TicketSchema.plugin(autoIncrement, 'Ticket');
  const Ticket = mongoose.model('Ticket', TicketSchema);
  await protocol.run((by) => new Ticket({ by }).save());
  await mongoose.disconnect();
});
