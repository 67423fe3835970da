"""The reference web client: the pages a person plays in, served by the app itself (/play/). Its views serve
page shells only; the pages' scripts talk to the API over HTTP, as any third-party client would."""
