# Italiano. Same message ids as en.ftl. CLDR data: it (https://cldr.unicode.org/).

## Dates and times (the dates themselves are CLDR data: src/domain/i18n/cldr.rs)
date-range = { $from } – { $to }
date-from = dal { $date }
datetime-local = { $date }, { $time } (ora locale)

## Shared phrases
hi = Ciao { $name },
hi-no-name = Buongiorno,
label-colon = { $label }:
label-hotel = Hotel
label-booking = Prenotazione
label-booking-id = ID prenotazione
label-hcn = Numero di conferma dell’hotel
label-checkin = Check-in
label-checkout = Check-out
label-room = Camera
label-room-n = Camera { $n }
label-guests = Ospiti
label-total = Prezzo totale
label-pnr = Codice di prenotazione della compagnia aerea
label-passengers = { $count ->
    [one] Passeggero
   *[other] Passeggeri
}
nights = { $count ->
    [one] { $count } notte
   *[other] { $count } notti
}
adults = { $count ->
    [one] { $count } adulto
   *[other] { $count } adulti
}
children = { $count ->
    [one] { $count } bambino
   *[other] { $count } bambini
}
instructions-title = Istruzioni per il check-in

## Booking confirmation (hotel)
confirmation-subject = Il tuo soggiorno presso { $hotel } è confermato
confirmation-heading = Il tuo soggiorno è confermato
confirmation-intro = Grazie per aver prenotato con { $brand }. Il tuo soggiorno presso { $hotel } è confermato.
confirmation-hcn-known = Mostra il numero di conferma dell’hotel alla reception al check-in e tieni a portata di mano l’ID prenotazione se ci contatti.
confirmation-hcn-later = Il numero di conferma dell’hotel arriva di solito con un’e-mail separata qualche giorno prima dell’arrivo. Tieni a portata di mano l’ID prenotazione se ci contatti.
confirmation-closing = Ti auguriamo un buon viaggio.

## Hotel confirmation number
hcn-subject = Il tuo numero di conferma di { $hotel }
hcn-heading = Il tuo numero di conferma dell’hotel
hcn-intro = { $hotel } ha confermato la tua prenotazione nel proprio sistema. Il tuo numero di conferma dell’hotel è:
hcn-intro-text = { $hotel } ha confermato la tua prenotazione nel proprio sistema.
hcn-line = Il tuo numero di conferma dell’hotel: { $number }
hcn-show = Mostra questo numero alla reception al check-in: è così che l’hotel trova la tua prenotazione.
hcn-booking-id = Il tuo ID prenotazione con { $brand } resta { $id }. Tienilo a portata di mano se ci contatti.

## Arrival guide
arrival-subject = Il tuo soggiorno presso { $hotel } inizia tra 3 giorni
arrival-heading = Il tuo soggiorno inizia tra 3 giorni
arrival-intro = Il tuo soggiorno presso { $hotel } inizia { $date }. Ecco tutto quello che ti serve per l’arrivo.
arrival-before-title = Prima di partire
arrival-bring-id = Un documento d’identità con foto o il passaporto per il check-in
arrival-bring-card = Una carta di pagamento per gli extra: molti hotel bloccano un deposito all’arrivo
arrival-bring-booking-id = Il tuo ID prenotazione
arrival-bring-both = Il tuo ID prenotazione e il numero di conferma dell’hotel
arrival-late = Se i tuoi piani cambiano o prevedi di arrivare tardi, rispondi a questa e-mail.
arrival-closing = Buon viaggio!

## Check-in day
checkin-subject = Oggi: check-in presso { $hotel }
checkin-heading = Il check-in è oggi
checkin-intro = Oggi fai il check-in presso { $hotel }. Ti auguriamo un buon viaggio.
checkin-ready = Tieni pronti alla reception un documento d’identità con foto e una carta di pagamento. Se sei in ritardo, rispondi a questa e-mail e avviseremo l’hotel.

## Thank you
thanks-subject = Grazie per aver soggiornato presso { $hotel }
thanks-heading = Grazie
thanks-intro = Grazie per aver soggiornato presso { $hotel }. Speriamo che tu abbia trascorso dei bei giorni e che il rientro sia andato bene.
thanks-reply = Se qualcosa del tuo soggiorno richiede la nostra attenzione, rispondi semplicemente a questa e-mail.
thanks-regards = Un caro saluto,

## Booking updated
updated-subject = La tua prenotazione presso { $hotel } è stata aggiornata
updated-heading = La tua prenotazione è stata aggiornata
updated-intro = La tua prenotazione presso { $hotel } è stata aggiornata.
updated-what-changed = Ecco cosa è cambiato:
updated-before = Prima
updated-now = Ora
updated-current = La tua prenotazione ora
updated-unexpected = Se questa modifica non è quella che ti aspettavi, rispondi a questa e-mail indicando il tuo ID prenotazione.
field-hotel-id = Codice hotel
field-hotel-name = Hotel
field-checkin = Check-in
field-checkout = Check-out
field-room-name = Camera { $n }
field-room-board = Trattamento, camera { $n }
field-room-adults = Adulti, camera { $n }
field-room-children = Bambini, camera { $n }
field-guests = Ospiti
field-holder = Prenotazione a nome di
field-hotel-confirmation-number = Numero di conferma dell’hotel
field-segment-flight-number = Numero di volo, volo { $n }
field-segment-origin = Da, volo { $n }
field-segment-destination = A, volo { $n }
field-segment-departure = Partenza, volo { $n }
field-segment-arrival = Arrivo, volo { $n }
field-passengers = Passeggeri

## Flights
flight-subject = Il tuo volo { $from } → { $to } è confermato
flight-heading = Il tuo volo è confermato
flight-intro = Grazie per aver prenotato con { $brand }. Il tuo volo da { $from } a { $to } è confermato.
flight-list-title = { $count ->
    [one] Il tuo volo
   *[other] I tuoi voli
}
flight-number = Volo { $number }
flight-departs = Partenza
flight-arrives = Arrivo
flight-local-times = Tutti gli orari sono locali dell’aeroporto interessato.
flight-checkin-pnr = Usa il codice di prenotazione della compagnia aerea per fare il check-in con la compagnia.
flight-rules = Controlla le regole di check-in e bagaglio della compagnia aerea prima di partire e assicurati che i nomi dei passeggeri corrispondano ai documenti di viaggio.
flight-closing = Ti auguriamo un buon volo.
flight-changed-subject = Importante: l’orario del tuo volo è cambiato
flight-changed-heading = L’orario del tuo volo è cambiato
flight-changed-intro = La compagnia aerea ha cambiato l’orario della tua prenotazione di volo. Controlla i nuovi orari qui sotto.
flight-changed-intro-pnr = La compagnia aerea ha cambiato l’orario della tua prenotazione di volo { $pnr }. Controlla i nuovi orari qui sotto.
flight-changed-new = Nuovo orario
flight-changed-previous = Orario precedente
flight-changed-todo = Cosa fare
flight-changed-reply = Rispondi a questa e-mail per accettare il nuovo orario. Se i nuovi orari non vanno bene per te, contattaci rispondendo a questa e-mail e valuteremo insieme le alternative.
flight-booking-title = Prenotazione di volo { $id }

## Cancellation
cancelled-subject = La tua prenotazione { $id } è cancellata
cancelled-heading = La tua prenotazione è cancellata
cancelled-intro = La tua prenotazione { $id } è stata cancellata.
cancelled-fee = Penale di cancellazione
cancelled-refund = Importo del rimborso
cancelled-fee-applies = Per questa prenotazione è prevista una penale di cancellazione.
cancelled-questions = Se non ti aspettavi questa cancellazione o hai domande, rispondi a questa e-mail indicando il tuo ID prenotazione.

## Booking not confirmed
notice-title-cancelled = La tua prenotazione è stata cancellata
notice-title-not-confirmed = Non siamo riusciti a confermare la tua prenotazione
notice-cancelled = Ci dispiace: la tua prenotazione è stata cancellata. Il fornitore non ha potuto mantenerla, quindi non metterti in viaggio sulla base della conferma che ti abbiamo inviato.
notice-cancelled-trip = Ci dispiace: la tua prenotazione per { $trip } è stata cancellata. Il fornitore non ha potuto mantenerla, quindi non metterti in viaggio sulla base della conferma che ti abbiamo inviato.
notice-not-confirmed = Ci dispiace: non siamo riusciti a confermare la tua prenotazione. Il fornitore non è riuscito a completarla, quindi non esiste alcuna prenotazione a tuo nome.
notice-not-confirmed-trip = Ci dispiace: non siamo riusciti a confermare la tua prenotazione per { $trip }. Il fornitore non è riuscito a completarla, quindi non esiste alcuna prenotazione a tuo nome.
notice-book-again = Se vuoi ancora partire, puoi prenotare di nuovo; prezzi e disponibilità potrebbero essere cambiati. Per qualsiasi domanda, rispondi semplicemente a questa e-mail.
refund-not-charged = Non ti è stato addebitato nulla.
refund-unknown = Se per questa prenotazione è stato addebitato un pagamento, verrà rimborsato per intero; ti scriveremo se avremo bisogno di qualcosa da te.
refund-refunding = Il tuo pagamento è in corso di rimborso sulla carta che hai usato. I rimborsi compaiono di solito nell’estratto conto entro 5–10 giorni lavorativi.
refund-refunding-amount = Il tuo pagamento di { $amount } è in corso di rimborso sulla carta che hai usato. I rimborsi compaiono di solito nell’estratto conto entro 5–10 giorni lavorativi.
refund-refunded = Il tuo pagamento è stato rimborsato sulla carta che hai usato. Di solito compare nell’estratto conto entro 5–10 giorni lavorativi.
refund-refunded-amount = Il tuo pagamento di { $amount } è stato rimborsato sulla carta che hai usato. Di solito compare nell’estratto conto entro 5–10 giorni lavorativi.
refund-arranging = Stiamo organizzando il tuo rimborso e te lo confermeremo via e-mail appena sarà stato effettuato.

## Unfinished checkout
checkout-trip-stay = il tuo soggiorno, { $dates }
checkout-subject = La tua prenotazione non è stata completata: non è stato addebitato nulla
checkout-heading = La tua prenotazione non è stata completata
checkout-intro = Hai iniziato una prenotazione con { $brand }, ma non è stata completata e non è stato addebitato nulla.
checkout-intro-trip = Hai iniziato una prenotazione con { $brand } per { $trip }, ma non è stata completata e non è stato addebitato nulla.
checkout-reasons = Se hai cambiato idea, non devi fare nulla. Se volevi prenotare, questi sono i due motivi più comuni per cui un pagamento con carta non va a buon fine, e come risolvere ciascuno:
checkout-retry = Riprova la prenotazione
checkout-retry-prices = Prezzi e disponibilità possono cambiare: ricontrollali quando riprovi. Se è andato storto qualcos’altro, rispondi semplicemente a questa e-mail.
declined-funds-subject = Il tuo pagamento non è andato a buon fine: fondi o credito insufficienti
declined-security-subject = Il tuo pagamento è stato bloccato da un controllo di sicurezza
declined-intro = La tua prenotazione con { $brand } non è stata completata e non è stato addebitato nulla. Abbiamo verificato il pagamento ed ecco cosa lo ha bloccato:
declined-intro-trip = La tua prenotazione con { $brand } per { $trip } non è stata completata e non è stato addebitato nulla. Abbiamo verificato il pagamento ed ecco cosa lo ha bloccato:
declined-questions = Prezzi e disponibilità possono cambiare: ricontrollali quando riprovi. Per qualsiasi domanda, rispondi semplicemente a questa e-mail.
fix-funds-title = Fondi o credito disponibile insufficienti
fix-funds-why = Il saldo o il plafond della carta potrebbero non coprire l’intero importo del soggiorno, oppure potrebbe essere stato raggiunto un limite di spesa giornaliero.
fix-funds-how = Come risolvere: usa un’altra carta, oppure chiedi alla tua banca di aumentare il limite o di trasferire fondi su questa carta, poi riprova.
fix-security-title = Un controllo di sicurezza dell’emittente della carta o del processore di pagamento
fix-security-why = Banche e processori di pagamento a volte bloccano un pagamento che sembra loro insolito, per esempio un importo più alto, un pagamento all’estero o un primo acquisto presso un nuovo negozio. Serve a proteggerti e non dice nulla di negativo su di te.
fix-security-how = Come risolvere: approva il pagamento nell’app della tua banca, oppure chiama il numero sul retro della carta e comunica che vuoi effettuare questo pagamento, poi riprova.

## Marketing footer and unsubscribe pages
marketing-footer = Questa è un’e-mail di marketing di { $brand }.
marketing-unsubscribe-link = Annulla l’iscrizione alle e-mail di marketing
marketing-unsubscribe-one-click = con un clic.
marketing-unsubscribe-text = Annulla l’iscrizione alle e-mail di marketing con un clic: { $url }
marketing-bookings-still = Le e-mail sulle tue prenotazioni continueranno ad arrivarti.
unsubscribe-title = Annulla l’iscrizione alle e-mail di marketing
unsubscribe-question = Annullare l’iscrizione alle e-mail di marketing?
unsubscribe-who = { $email } non riceverà più e-mail di marketing da { $brand }.
unsubscribe-bookings-still = Le e-mail sulle tue prenotazioni (conferme, modifiche, dettagli per il check-in) continueranno ad arrivarti.
unsubscribe-button = Annulla iscrizione
unsubscribe-nothing-yet = L’apertura di questa pagina non ha cambiato nulla.
unsubscribe-retry-title = Riprova più tardi
unsubscribe-retry = Al momento non è stato possibile gestire la tua richiesta. Non è stato cambiato nulla.
unsubscribe-invalid-title = Questo link di disiscrizione non è valido
unsubscribe-invalid-cut = Potrebbe essere stato troncato o modificato. Riapri il link dall’e-mail oppure copialo per intero. Non è stato cambiato nulla.
unsubscribe-invalid-list = Non è un link per annullare l’iscrizione alle e-mail di marketing. Non è stato cambiato nulla.
unsubscribe-post-title = Non è stato cambiato nulla
unsubscribe-post-only = Una richiesta di disiscrizione deve essere un POST con il corpo List-Unsubscribe=One-Click (RFC 8058). Usa il pulsante nella pagina di disiscrizione.
unsubscribe-done-title = Iscrizione annullata
unsubscribe-done = { $email } non riceverà più e-mail di marketing. Le e-mail sulle tue prenotazioni continueranno ad arrivarti.
unsubscribe-done-brand = { $email } non riceverà più e-mail di marketing da { $brand }. Le e-mail sulle tue prenotazioni continueranno ad arrivarti.

## The owner's answer to a guest's message (the owner's own words go between these)
answer-subject = Sulla sua prenotazione { $ref }
answer-about = La sua prenotazione { $ref }
answer-reply = Per scriverci di nuovo, basta rispondere a questa email.

## Board types
board-room-only = Solo pernottamento
board-breakfast = Colazione inclusa
board-half-board = Mezza pensione
board-full-board = Pensione completa
board-all-inclusive = All inclusive

## The calendar attachment
calendar-note-add = { $count ->
    [one] Il file di calendario allegato aggiunge questa prenotazione al tuo calendario. Le nostre prossime e-mail lo aggiorneranno e, in caso di cancellazione, lo rimuoveranno.
   *[other] I file di calendario allegati aggiungono ogni volo al tuo calendario. Le nostre prossime e-mail li aggiorneranno e, in caso di cancellazione, li rimuoveranno.
}
calendar-note-cancel = { $count ->
    [one] Il file di calendario allegato rimuove dal tuo calendario la prenotazione cancellata.
   *[other] I file di calendario allegati rimuovono dal tuo calendario i voli cancellati.
}
calendar-note-update-remove = I file di calendario allegati aggiornano i tuoi voli nel calendario e rimuovono i voli che non esistono più.
