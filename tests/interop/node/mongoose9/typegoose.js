// @typegoose/auto-increment 5 on mongoose 9, numbering `_id` of the model `Ticket` as its README
// shows: counter `{ field: "_id", modelName: "Ticket", count }` in `identitycounters`, first
// value 0 (`startAt`).
'use strict';

const mongoose = require('mongoose');
const { AutoIncrementID } = require('@typegoose/auto-increment');
const protocol = require('../protocol');

protocol.main(async () => {
  const { uri, database } = protocol.args();
  await mongoose.connect(uri, { dbName: database });
  const TicketSchema = new mongoose.Schema({ _id: Number, by: String });
  TicketSchema.plugin(AutoIncrementID, {});
  const Ticket = mongoose.model('Ticket', TicketSchema);
  await protocol.run((by) => Ticket.create({ by }));
  await mongoose.disconnect();
});
