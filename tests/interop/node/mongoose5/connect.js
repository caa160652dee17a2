// Connects mongoose 5 to `database` of `uri` with the options its deprecation warnings ask for.
'use strict';

module.exports = function connect(mongoose, uri, database) {
  return mongoose.connect(uri, {
    dbName: database,
    useNewUrlParser: true,
    useUnifiedTopology: true,
    useFindAndModify: false,
    useCreateIndex: true,
  });
};
